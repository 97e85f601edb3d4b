package dev.leasehold.engine;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import dev.leasehold.engine.server.LockKeys;

class LockKeysTest {

    /** What Redis Cluster hashes: the part between the first '{' and the first '}' after it, if not empty. */
    private static String hashedPart(String redisKey) {
        int open = redisKey.indexOf('{');
        int close = open < 0 ? -1 : redisKey.indexOf('}', open + 1);
        return close > open + 1 ? redisKey.substring(open + 1, close) : redisKey;
    }

    @Test
    void everyNameOfALockHashesToTheSameSlotWhateverTheKey() {
        for (String key : List.of("order:42", "}", "}{", "}x", "{", "{}", "a}b", "\\", "\\}x", "}" + "k".repeat(999))) {
            LockKeys keys = LockKeys.of("lock:", key);
            String tag = hashedPart(keys.lock());
            assertThat(keys.lock()).as(key).isNotEqualTo(tag);
            for (String name : List.of(keys.readers(), keys.writerWaiting(), keys.fence(), keys.channel())) {
                assertThat(hashedPart(name)).as("%s of '%s'", name, key).isEqualTo(tag);
            }
        }
    }

    @Test
    void differentKeysNeverShareRedisNamesAndPlainKeysKeepTheirLayout() {
        List<String> keys = List.of("}x", "\\}x", "\\\\}x", "x", "\\x", "}", "\\}", "\\");
        Set<String> names = new HashSet<>();
        keys.forEach(key -> names.add(LockKeys.of("lock:", key).lock()));
        assertThat(names).hasSize(keys.size());
        assertThat(LockKeys.of("lock:", "order:42").lock()).isEqualTo("lock:{order:42}");
        assertThat(LockKeys.of("lock:", "a}b").lock()).isEqualTo("lock:{a}b}");
    }

    @Test
    void derivedNamesAreTheLayoutAndEqualTheSameNamesGivenOneByOne() {
        LockKeys keys = LockKeys.of("lock:", "order:42");
        assertThat(List.of(keys.readers(), keys.writerWaiting(), keys.fence(), keys.channel(), keys.queue(),
                keys.queueExpiry())).containsExactly("lock:{order:42}:readers", "lock:{order:42}:writer-waiting",
                        "lock:{order:42}:fence", "lock:{order:42}:released", "lock:{order:42}:queue",
                        "lock:{order:42}:queue-expiry");
        LockKeys given = new LockKeys("order:42", "lock:{order:42}", "lock:{order:42}:readers",
                "lock:{order:42}:writer-waiting", "lock:{order:42}:fence", "lock:{order:42}:released",
                "lock:{order:42}:queue", "lock:{order:42}:queue-expiry");
        assertThat(given).isEqualTo(keys).hasSameHashCodeAs(keys);
        LockKeys other = new LockKeys("order:42", "lock:{order:42}", "elsewhere", "lock:{order:42}:writer-waiting",
                "lock:{order:42}:fence", "lock:{order:42}:released", "lock:{order:42}:queue", "lock:{order:42}:queue-expiry");
        assertThat(other.readers()).isEqualTo("elsewhere");
        assertThat(other).isNotEqualTo(keys);
    }
}
