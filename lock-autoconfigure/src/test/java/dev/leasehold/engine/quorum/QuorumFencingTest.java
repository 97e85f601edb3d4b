package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing tokens stay strictly increasing whichever majority answers: five nodes, three of them running
 * an hour behind (libfaketime), and the two unavailable nodes (paused, or cut off: answering every
 * command with an error) rotating from grant to grant, so that grants are decided by different
 * majorities whose counters disagree.
 */
@Timeout(120)
class QuorumFencingTest {

    private static QuorumFixture nodes;

    @BeforeAll
    static void startNodes() {
        nodes = new QuorumFixture(5, 3, QuorumFixture.anHourBehind());
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void tokensIncreaseWhileTheUnavailablePairRotatesAcrossSkewedClocks() {
        long skewSeconds = seconds(nodes.servers.get(3)) - seconds(nodes.servers.get(0));
        assertThat(skewSeconds).as("the faked nodes run an hour behind").isBetween(3590L, 3610L);
        assertThat(Math.abs(seconds(nodes.servers.get(4)) - seconds(nodes.servers.get(3)))).isLessThan(10);

        LockEngineSettings settings = QuorumFixture.settings(Duration.ofSeconds(5));
        List<DefaultLockEngine> clients = List.of(nodes.client(settings), nodes.client(settings));
        List<Long> tokens = new ArrayList<>();
        Set<String> disagreements = new HashSet<>();
        for (int i = 0; i < 15; i++) {
            int a = i % 5;
            int b = (i + 2) % 5;
            // a paused node runs what queued up when it resumes; a cut-off one (every command refused) never does
            boolean cutOff = i % 3 != 0;
            if (cutOff) {
                nodes.servers.get(a).command("ACL", "SETUSER", "default", "-@scripting");
                nodes.servers.get(b).command("ACL", "SETUSER", "default", "-@scripting");
            }
            else {
                nodes.pause(a, b);
            }
            try {
                // what the nodes counted before this grant: they differ once the pair has rotated
                Set<String> counters = new HashSet<>();
                for (int n = 0; n < 5; n++) {
                    if (n != a && n != b) {
                        counters.add(String.valueOf(nodes.servers.get(n).command("GET", "lock:{fenced}:fence")));
                    }
                }
                if (counters.size() > 1) {
                    disagreements.add(counters.toString());
                }
                try (LockHandle handle = clients.get(i % 2).lock("fenced", Duration.ofSeconds(5))) {
                    tokens.add(handle.fencingToken());
                }
            }
            finally {
                for (int n : new int[] { a, b }) {
                    nodes.servers.get(n).resume();
                    nodes.servers.get(n).command("ACL", "SETUSER", "default", "+@all");
                }
            }
        }
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d of %s", i, tokens).isGreaterThan(tokens.get(i - 1));
        }
        // the case that breaks a token taken from one node, or a plain maximum, did happen
        assertThat(disagreements).as("grants decided by majorities whose counters disagreed").isNotEmpty();
    }

    private static long seconds(TestRedisServer server) {
        // RespClient renders the array reply as [seconds, microseconds]
        return Long.parseLong(server.command("TIME").replace("[", "").split(",")[0].trim());
    }
}
