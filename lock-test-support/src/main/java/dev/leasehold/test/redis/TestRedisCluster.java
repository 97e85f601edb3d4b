package dev.leasehold.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Assumptions;

/**
 * A Redis Cluster of three masters (no replicas) made of {@link TestRedisServer}s of our own, joined
 * with plain CLUSTER commands (no redis-cli needed). Slots are split evenly between the nodes.
 */
public final class TestRedisCluster implements AutoCloseable {

    private static final int SLOTS = 16384;

    private final List<TestRedisServer> nodes = new ArrayList<>();

    private TestRedisCluster() {
    }

    /** Starts and joins the cluster; aborts the test where servers cannot be started here (a shared URL). */
    public static TestRedisCluster start(int masters) {
        if (TestRedisServers.sharedServerConfigured()) {
            Assumptions.abort("a cluster needs servers of our own, but " + TestRedisServers.URL_VARIABLE + " is set");
        }
        TestRedisCluster cluster = new TestRedisCluster();
        try {
            for (int i = 0; i < masters; i++) {
                cluster.nodes.add(TestRedisServers.start(List.of("--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")));
            }
            cluster.join();
            return cluster;
        }
        catch (RuntimeException ex) {
            cluster.close();
            throw ex;
        }
    }

    private void join() {
        int perNode = SLOTS / nodes.size();
        for (int i = 0; i < nodes.size(); i++) {
            int first = i * perNode;
            int last = (i == nodes.size() - 1) ? SLOTS - 1 : first + perNode - 1;
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = first; slot <= last; slot++) {
                command.add(String.valueOf(slot));
            }
            nodes.get(i).command(command.toArray(String[]::new));
        }
        TestRedisServer seed = nodes.get(0);
        for (TestRedisServer node : nodes.subList(1, nodes.size())) {
            seed.command("CLUSTER", "MEET", node.host(), String.valueOf(node.port()));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!nodes.stream().allMatch(TestRedisCluster::clusterOk)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cluster did not reach cluster_state:ok within 30 s");
            }
            try {
                Thread.sleep(50);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
    }

    private static boolean clusterOk(TestRedisServer node) {
        return node.command("CLUSTER", "INFO").contains("cluster_state:ok");
    }

    public List<TestRedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** {@code host:port} of every node, as {@code spring.data.redis.cluster.nodes} takes them. */
    public List<String> nodeAddresses() {
        return nodes.stream().map(node -> node.host() + ":" + node.port()).toList();
    }

    @Override
    public void close() {
        nodes.forEach(TestRedisServer::close);
        nodes.clear();
    }
}
