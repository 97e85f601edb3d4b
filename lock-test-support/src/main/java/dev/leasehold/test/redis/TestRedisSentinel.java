package dev.leasehold.test.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Assumptions;

/**
 * A primary, one replica and one Sentinel watching them (master name {@value #MASTER_NAME}), all
 * {@code redis-server} processes of our own, so a test can kill the primary and watch the failover.
 */
public final class TestRedisSentinel implements AutoCloseable {

    public static final String MASTER_NAME = "leasehold";

    private final TestRedisServer primary;

    private final TestRedisServer replica;

    private final TestRedisServer sentinel;

    private TestRedisSentinel(TestRedisServer primary, TestRedisServer replica, TestRedisServer sentinel) {
        this.primary = primary;
        this.replica = replica;
        this.sentinel = sentinel;
    }

    /** Starts the three processes; aborts the test where there is no redis-server binary. */
    public static TestRedisSentinel start() {
        String binary = TestRedisServers.findBinary();
        if (binary == null || System.getenv(TestRedisServers.URL_VARIABLE) != null) {
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
        TestRedisSentinel setup = new TestRedisSentinel(primary, replica, sentinel);
        setup.awaitReplicaInSync(Duration.ofSeconds(20));
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

    /**
     * Cuts the replica off the primary: writes from now on do not reach it, as in a network partition.
     * The primary gets a password (connections already open stay authenticated) and drops the replica's
     * link, so the replica's reconnects fail. (A proxy would not do: Sentinel re-points a replica that
     * follows another address than the primary's.)
     */
    public void cutReplication() {
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
        sentinel.close();
        replica.close();
        primary.close();
    }
}
