package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each node's grants and refusals count in its health when its reply comes, also the reply of the node a decided
 * round no longer waited for; a node that fails the step counts an error, neither a grant nor a refusal.
 */
@Timeout(60)
class QuorumNodeMetricsTest {

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
            nodes.healAll();
            nodes.close();
        }
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
        nodes.servers.get(0).command("ACL", "SETUSER", "default", "-@scripting");
        try {
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
        finally {
            nodes.healAll();
        }
    }

    private static Grant acquire(LockKeys keys, String token) throws Exception {
        return quorum.acquire(keys, LockMode.WRITE, token, 30_000, 0, "waiter-0123456789abcdef", QueueTry.NONE)
            .get(5, TimeUnit.SECONDS);
    }
}
