package dev.leasehold.engine;

import java.time.Duration;

import dev.leasehold.LockKeyException;
import dev.leasehold.LockService;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class BadInputTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static EngineFixture fixture;

    private static LockService locks;

    @BeforeAll
    static void setUp() {
        fixture = new EngineFixture(redis.server());
        locks = fixture.engine();
    }

    @AfterAll
    static void tearDown() {
        fixture.close();
    }

    @Test
    void nullBlankAndOverlongKeysAreRefusedWithTheReason() {
        assertThatThrownBy(() -> locks.tryLock(null, Duration.ZERO, null)).isInstanceOf(LockKeyException.class)
            .hasMessageContaining("null");
        assertThatThrownBy(() -> locks.lock("  ", Duration.ZERO)).isInstanceOf(LockKeyException.class)
            .hasMessageContaining("blank");
        assertThatThrownBy(() -> locks.isLocked("")).isInstanceOf(LockKeyException.class);
        String overlong = "k".repeat(DefaultLockEngine.MAX_KEY_LENGTH + 1);
        assertThatThrownBy(() -> locks.withLock(overlong, Duration.ZERO, () -> "never"))
            .isInstanceOf(LockKeyException.class)
            .hasMessageContaining("at most 1000 characters, was 1001");
        assertThat(locks.tryLock("k".repeat(DefaultLockEngine.MAX_KEY_LENGTH), Duration.ZERO, null)).isPresent()
            .get().satisfies(handle -> handle.close());
    }

    @Test
    void negativeDurationsAreRefusedWithTheValue() {
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ofSeconds(-1), null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("waitTime")
            .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ZERO, Duration.ofMillis(-5)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ZERO, Duration.ZERO))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> locks.tryLock("k", null, null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("waitTime");
        assertThat(locks.isLocked("k")).isFalse();
    }

    @Test
    void keysWithHashTagCharactersStillLockOneSlotAndDoNotCollide() {
        try (var braces = locks.lock("a{b}c", Duration.ZERO); var colon = locks.lock("a:b", Duration.ZERO)) {
            assertThat(redis.server().command("EXISTS", "lock:{a{b}c}")).isEqualTo("1");
            assertThat(locks.isLocked("a{b}c")).isTrue();
            assertThat(locks.isLocked("a{b")).isFalse();
        }
    }
}
