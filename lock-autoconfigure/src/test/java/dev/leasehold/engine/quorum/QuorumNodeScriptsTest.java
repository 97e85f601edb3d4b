package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A quorum node's uncontended acquire and release take a path of their own in the scripts, before any function is
 * defined (acquire_exclusive.lua, release_exclusive.lua): what they leave on every node is what the general path
 * leaves, a release by a token that does not own the key changes nothing, and the counter never expires.
 */
@Timeout(60)
class QuorumNodeScriptsTest {

    private static QuorumFixture nodes;

    private static QuorumLockServer quorum;

    @BeforeAll
    static void startNodes() {
        nodes = new QuorumFixture(3);
        quorum = nodes.quorum(QuorumFixture.settings(Duration.ofSeconds(30)));
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void anUncontendedGrantCountsOnEveryNodeAndOnlyItsOwnerReleasesIt() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "scripted");
        // a counter left with an expiry (by an earlier fence-retention setting) is made permanent by the next grant
        nodes.servers.get(0).command("SET", keys.fence(), "41", "PX", "600000");
        Grant first = grant(keys, "owner-token-0123456789abcdef");
        assertThat(first.granted()).isTrue();
        long token = first.fencingToken();
        assertThat(token).as("the highest node's counter, made known to a majority").isGreaterThan(41);
        for (TestRedisServer node : nodes.servers) {
            String value = String.valueOf(node.command("GET", keys.lock()));
            assertThat(value).startsWith("owner-token-0123456789abcdef@");
            assertThat(Long.parseLong(String.valueOf(node.command("PTTL", keys.fence())))).as("counter expiry").isEqualTo(-1);
            assertThat(Long.parseLong(String.valueOf(node.command("PTTL", keys.lock())))).isBetween(1L, 30_000L);
        }

        assertThat(quorum.release(keys, LockMode.WRITE, "other-token-0123456789abcdef").get(5, TimeUnit.SECONDS))
            .as("a token that does not own the key").isFalse();
        // a token that only begins like the owner's does not own it either
        assertThat(quorum.release(keys, LockMode.WRITE, "owner-token-0123456789abcde").get(5, TimeUnit.SECONDS)).isFalse();
        for (TestRedisServer node : nodes.servers) {
            assertThat(String.valueOf(node.command("GET", keys.lock()))).startsWith("owner-token-0123456789abcdef@");
        }

        assertThat(quorum.release(keys, LockMode.WRITE, "owner-token-0123456789abcdef").get(5, TimeUnit.SECONDS)).isTrue();
        for (TestRedisServer node : nodes.servers) {
            assertThat(node.command("EXISTS", keys.lock())).isEqualTo("0");
        }
        Grant next = grant(keys, "next-token-0123456789abcdef0");
        assertThat(next.fencingToken()).isGreaterThan(token);
        assertThat(quorum.release(keys, LockMode.WRITE, "next-token-0123456789abcdef0").get(5, TimeUnit.SECONDS)).isTrue();
    }

    private static Grant grant(LockKeys keys, String token) throws Exception {
        return quorum.acquire(keys, LockMode.WRITE, token, 30_000, 0, "waiter-0123456789abcdef", QueueTry.NONE)
            .get(5, TimeUnit.SECONDS);
    }
}
