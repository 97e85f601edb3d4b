package dev.leasehold.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Assumptions;

/**
 * A primary, one replica and one Sentinel watching them (master name {@value #MASTER_NAME}), all
 * {@code redis-server} processes of our own, so a test can kill the primary and watch the failover.
 * {@link #start(int, int)} starts more replicas and Sentinels (a majority quorum), for repeated failovers:
 * {@link #killPrimary()}, {@link #awaitPromotion}, {@link #rejoin} and {@link #awaitSettled}.
 */
public final class TestRedisSentinel implements AutoCloseable {

    public static final String MASTER_NAME = "leasehold";

    private final TestRedisServer primary;

    private final TestRedisServer replica;

    private final TestRedisServer sentinel;

    /** Every data node (the first is the initial primary) and every Sentinel. */
    private final List<TestRedisServer> nodes;

    private final List<TestRedisServer> sentinels;

    private TestRedisSentinel(List<TestRedisServer> nodes, List<TestRedisServer> sentinels) {
        this.primary = nodes.get(0);
        this.replica = nodes.get(1);
        this.sentinel = sentinels.get(0);
        this.nodes = List.copyOf(nodes);
        this.sentinels = List.copyOf(sentinels);
    }

    /** Starts the three processes; aborts the test where there is no redis-server binary. */
    public static TestRedisSentinel start() {
        String binary = TestRedisServers.findBinary();
        if (binary == null || TestRedisServers.sharedServerConfigured()) {
            Assumptions.abort("a Sentinel set-up needs a redis-server binary on the PATH");
        }
        TestRedisServer primary = TestRedisServers.start();
        TestRedisServer replica = TestRedisServers.start(List.of("--replicaof", primary.host(),
                String.valueOf(primary.port())));
        LocalRedisServer sentinel = LocalRedisServer.sentinel(binary, TestRedisServers.freePort(), List.of(
                "sentinel monitor " + MASTER_NAME + " " + primary.host() + " " + primary.port() + " 1",
                "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                "sentinel failover-timeout " + MASTER_NAME + " 5000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1"));
        sentinel.start();
        TestRedisSentinel setup = new TestRedisSentinel(List.of(primary, replica), List.of(sentinel));
        setup.awaitReplicaInSync(Duration.ofSeconds(20));
        return setup;
    }

    /**
     * A primary, {@code replicas} replicas and {@code sentinels} Sentinels with a majority quorum (2 of 3),
     * {@code down-after-milliseconds} 1000; returns once every replica is in sync and every Sentinel knows
     * them all. {@link #primary()} and {@link #replica()} are the initial primary and the first replica.
     */
    public static TestRedisSentinel start(int replicas, int sentinels) {
        if (replicas < 1 || sentinels < 1) {
            throw new IllegalArgumentException("needs at least one replica and one Sentinel");
        }
        String binary = TestRedisServers.findBinary();
        if (binary == null || TestRedisServers.sharedServerConfigured()) {
            Assumptions.abort("a Sentinel set-up needs a redis-server binary on the PATH");
        }
        List<TestRedisServer> nodes = new ArrayList<>();
        List<TestRedisServer> watchers = new ArrayList<>();
        try {
            TestRedisServer primary = new LocalRedisServer(binary, TestRedisServers.freePort(), List.of());
            primary.start();
            nodes.add(primary);
            for (int i = 0; i < replicas; i++) {
                TestRedisServer replica = new LocalRedisServer(binary, TestRedisServers.freePort(),
                        List.of("--replicaof", primary.host(), String.valueOf(primary.port())));
                replica.start();
                nodes.add(replica);
            }
            int quorum = sentinels / 2 + 1;
            for (int i = 0; i < sentinels; i++) {
                LocalRedisServer watcher = LocalRedisServer.sentinel(binary, TestRedisServers.freePort(), List.of(
                        "sentinel monitor " + MASTER_NAME + " " + primary.host() + " " + primary.port() + " " + quorum,
                        "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                        "sentinel failover-timeout " + MASTER_NAME + " 5000",
                        "sentinel parallel-syncs " + MASTER_NAME + " 1"));
                watcher.start();
                watchers.add(watcher);
            }
        }
        catch (RuntimeException ex) {
            watchers.forEach(TestRedisServer::close);
            nodes.forEach(TestRedisServer::close);
            throw ex;
        }
        TestRedisSentinel setup = new TestRedisSentinel(nodes, watchers);
        try {
            setup.awaitSettled(Duration.ofSeconds(30));
        }
        catch (RuntimeException ex) {
            setup.close();
            throw ex;
        }
        return setup;
    }

    public TestRedisServer primary() {
        return primary;
    }

    public TestRedisServer replica() {
        return replica;
    }

    public TestRedisServer sentinel() {
        return sentinel;
    }

    /** Every data node: the initial primary first, then the replicas. */
    public List<TestRedisServer> nodes() {
        return nodes;
    }

    public List<TestRedisServer> sentinels() {
        return sentinels;
    }

    /** The data node Sentinel reports as the current primary. */
    public TestRedisServer currentPrimaryNode() {
        String address = currentPrimary();
        return nodes.stream()
            .filter(node -> (node.host() + ":" + node.port()).equals(address))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("Sentinel names " + address + ", not one of ours"));
    }

    /** SIGKILLs the current primary (it keeps no data) and returns it, for {@link #rejoin} later. */
    public TestRedisServer killPrimary() {
        TestRedisServer killed = currentPrimaryNode();
        killed.stop();
        return killed;
    }

    /** Waits until the first Sentinel names another primary than {@code before} and that node says it is one. */
    public TestRedisServer awaitPromotion(String before, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                if (!currentPrimary().equals(before)) {
                    TestRedisServer promoted = currentPrimaryNode();
                    if (promoted.command("ROLE").startsWith("[master")) {
                        return promoted;
                    }
                }
            }
            catch (RuntimeException ex) {
                // a node or Sentinel busy with the failover: look again
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Sentinel promoted no replica within " + timeout);
            }
            sleep(20);
        }
    }

    /**
     * Restarts a killed node (empty, as after a crash without persistence) as a replica of the current
     * primary, as Sentinel would reconfigure it anyway.
     */
    public void rejoin(TestRedisServer node) {
        node.start();
        TestRedisServer current = currentPrimaryNode();
        node.command("REPLICAOF", current.host(), String.valueOf(current.port()));
    }

    /**
     * Waits until every Sentinel names the same running primary, every other node is its replica with an
     * up link, and every Sentinel sees each of them as a replica that is not down: ready for the next failover.
     */
    public void awaitSettled(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (true) {
            try {
                last = unsettled();
                if (last.isEmpty()) {
                    return;
                }
            }
            catch (RuntimeException ex) {
                last = ex.getMessage();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Sentinel set-up did not settle within " + timeout + ": " + last);
            }
            sleep(50);
        }
    }

    /** What is not settled yet, or empty. */
    private String unsettled() {
        String primaryAddress = currentPrimary();
        for (TestRedisServer watcher : sentinels) {
            String reply = watcher.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
            if (!reply.replaceAll("[\\[\\]\\s]", "").replace(',', ':').equals(primaryAddress)) {
                return watcher.port() + " names " + reply + ", not " + primaryAddress;
            }
        }
        TestRedisServer current = currentPrimaryNode();
        if (!current.command("ROLE").startsWith("[master")) {
            return primaryAddress + " is not a primary yet";
        }
        for (TestRedisServer node : nodes) {
            if (node == current) {
                continue;
            }
            String info = node.command("INFO", "replication");
            if (!info.contains("master_port:" + current.port()) || !info.contains("master_link_status:up")) {
                return "replica " + node.port() + " not in sync with " + primaryAddress;
            }
            for (TestRedisServer watcher : sentinels) {
                String replicas = watcher.command("SENTINEL", "REPLICAS", MASTER_NAME);
                int at = replicas.indexOf("127.0.0.1:" + node.port());
                if (at < 0) {
                    return "Sentinel " + watcher.port() + " does not know replica " + node.port();
                }
                int end = replicas.indexOf("[name", at);
                String entry = replicas.substring(at, end < 0 ? replicas.length() : end);
                if (entry.contains("s_down") || entry.contains("disconnected")) {
                    return "Sentinel " + watcher.port() + " sees replica " + node.port() + " down";
                }
            }
        }
        return "";
    }

    /**
     * Cuts the replica off the primary: writes from now on do not reach it, as in a network partition.
     * The primary gets a password (connections already open stay authenticated) and drops the replica's
     * link, so the replica's reconnects fail. (A proxy would not do: Sentinel re-points a replica that
     * follows another address than the primary's.)
     */
    public void cutReplication() {
        cutReplication(primary);
    }

    /** {@link #cutReplication()} on another node, e.g. {@link #currentPrimaryNode()} after a failover. */
    public void cutReplication(TestRedisServer primary) {
        primary.commands(List.of(new String[] { "CONFIG", "SET", "requirepass", "partitioned" },
                new String[] { "CLIENT", "KILL", "TYPE", "replica" }));
    }

    /** The {@code host:port} Sentinel reports as the current primary. */
    public String currentPrimary() {
        String reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        List<String> parts = List.of(reply.replaceAll("[\\[\\]\\s]", "").split(","));
        return parts.get(0) + ":" + parts.get(1);
    }

    private void awaitReplicaInSync(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!replica.command("INFO", "replication").contains("master_link_status:up")) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the replica did not sync with the primary within " + timeout);
            }
            sleep(50);
        }
    }

    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        sentinels.forEach(TestRedisServer::close);
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
    }
}
