package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a quorum's nodes do per call, on three real servers shared by the tests (each test with a quorum server of its
 * own, so each node's health counts from zero):
 * <ul>
 * <li>a node's uncontended acquire and release take a path of their own in the scripts, before any function is
 * defined (acquire_exclusive.lua, release_exclusive.lua): what they leave on every node is what the general path
 * leaves, a release by a token that does not own the key changes nothing, and the counter never expires;</li>
 * <li>each node's grants and refusals count in its health when its reply comes, also the reply of the node a decided
 * round no longer waited for; a node that fails the step counts an error, neither a grant nor a refusal.</li>
 * </ul>
 */
@Timeout(60)
class QuorumNodesTest {

    @RegisterExtension
    static final QuorumFixture nodes = QuorumFixture.perClass(3);

    private QuorumLockServer quorum;

    @BeforeEach
    void connect() {
        quorum = nodes.quorum(QuorumFixture.settings(Duration.ofSeconds(30)));
    }

    @Test
    void anUncontendedGrantCountsOnEveryNodeAndOnlyItsOwnerReleasesIt() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "scripted");
        // a counter a majority knows, left with an expiry (by an earlier fence-retention setting): every majority
        // that decides the next grant includes one of them (a counter on one node only may be outvoted: the round
        // decides on the first two grants), and the grant makes it permanent
        nodes.servers.get(0).command("SET", keys.fence(), "41", "PX", "600000");
        nodes.servers.get(1).command("SET", keys.fence(), "41", "PX", "600000");
        Grant first = acquire(keys, "owner-token-0123456789abcdef");
        assertThat(first.granted()).isTrue();
        long token = first.fencingToken();
        assertThat(token).as("above the counter a majority knows").isGreaterThan(41);
        // the node the round did not wait for runs the grant too, a moment later
        Await.until(Duration.ofSeconds(5), "every node granted, its counter permanent", () -> nodes.servers.stream()
            .allMatch(node -> String.valueOf(node.command("GET", keys.lock())).startsWith("owner-token-0123456789abcdef@")
                    && "-1".equals(String.valueOf(node.command("PTTL", keys.fence())))));
        for (TestRedisServer node : nodes.servers) {
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
        Grant next = acquire(keys, "next-token-0123456789abcdef0");
        assertThat(next.fencingToken()).isGreaterThan(token);
        assertThat(quorum.release(keys, LockMode.WRITE, "next-token-0123456789abcdef0").get(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void everyNodesAnswerCountsInItsHealth() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "counted");
        assertThat(acquire(keys, "first-owner-0123456789abcdef").granted()).isTrue();
        Await.until(Duration.ofSeconds(5), "every node's grant counted, the last one's too",
                () -> quorum.nodeHealth().stream().allMatch(node -> node.granted() == 1));

        assertThat(acquire(keys, "second-owner-0123456789abcde").granted()).isFalse();
        Await.until(Duration.ofSeconds(5), "every node's refusal counted",
                () -> quorum.nodeHealth().stream().allMatch(node -> node.refused() == 1));

        // node 0 refuses scripts: an error there, and the other two still decide
        nodes.servers.get(0).command("ACL", "SETUSER", "default", "-@scripting"); // healed after the test
        assertThat(quorum.release(keys, LockMode.WRITE, "first-owner-0123456789abcdef").get(5, TimeUnit.SECONDS))
            .isTrue();
        LockKeys other = LockKeys.of("lock:", "counted-other");
        assertThat(acquire(other, "third-owner-0123456789abcdef").granted()).isTrue();
        Await.until(Duration.ofSeconds(5), "node 0's failed acquire counted as an error",
                () -> quorum.nodeHealth().get(0).errors() >= 2);
        Await.until(Duration.ofSeconds(5), "the other nodes' grants counted",
                () -> quorum.nodeHealth().get(1).granted() == 2 && quorum.nodeHealth().get(2).granted() == 2);
        QuorumNodeHealth refusing = quorum.nodeHealth().get(0);
        assertThat(refusing.granted()).isEqualTo(1);
        assertThat(refusing.refused()).isEqualTo(1);
    }

    private Grant acquire(LockKeys keys, String token) throws Exception {
        return quorum.acquire(keys, LockMode.WRITE, token, 30_000, 0, "waiter-0123456789abcdef", QueueTry.NONE)
            .get(5, TimeUnit.SECONDS);
    }
}
