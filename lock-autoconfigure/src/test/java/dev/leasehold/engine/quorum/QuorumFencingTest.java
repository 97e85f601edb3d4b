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

    /**
     * leasehold.quorum.fence-retention: the counters expire (here after 2 s; the property asks for a minute at
     * least), and tokens never fall below the client's clock, so once every node's counter is gone the next token
     * is still above the earlier ones (a bare counter would restart from 1). The nodes' own clocks, an hour apart,
     * do not matter: the floor is the client's.
     */
    @Test
    void withARetentionTheCountersExpireAndTokensStillIncrease() {
        LockEngineSettings settings = QuorumFixture.settings(Duration.ofSeconds(5));
        Duration retention = Duration.ofSeconds(2);
        List<DefaultLockEngine> clients = List.of(nodes.client(nodes.quorum(settings).fenceRetention(retention), settings),
                nodes.client(nodes.quorum(settings).fenceRetention(retention), settings));
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            // one node paused per grant, rotating: majorities differ, and the counters behind are raised
            int paused = i % 5;
            nodes.pause(paused);
            try (LockHandle handle = clients.get(i % 2).lock("retained", Duration.ofSeconds(5))) {
                tokens.add(handle.fencingToken());
            }
            finally {
                nodes.servers.get(paused).resume();
            }
        }
        for (int n = 0; n < 5; n++) {
            long ttl = Long.parseLong(nodes.servers.get(n).command("PTTL", "lock:{retained}:fence"));
            assertThat(ttl).as("node %d's counter expires within the retention", n).isBetween(1L, retention.toMillis());
        }
        dev.leasehold.engine.Await.until(Duration.ofSeconds(15), "every node's counter expired",
                () -> nodes.servers.stream().allMatch(node -> node.command("EXISTS", "lock:{retained}:fence").equals("0")));
        try (LockHandle handle = clients.get(0).lock("retained", Duration.ofSeconds(5))) {
            tokens.add(handle.fencingToken());
        }
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d of %s", i, tokens).isGreaterThan(tokens.get(i - 1));
        }
    }

    private static long seconds(TestRedisServer server) {
        // RespClient renders the array reply as [seconds, microseconds]
        return Long.parseLong(server.command("TIME").replace("[", "").split(",")[0].trim());
    }
}
