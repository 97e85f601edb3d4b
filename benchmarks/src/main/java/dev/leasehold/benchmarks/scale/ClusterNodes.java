package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.benchmarks.server.ServerCounters;
import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.SlotHash;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The Cluster part's view of its own cluster: who owns a slot, per-master counters, redirects, a slot's move. */
final class ClusterNodes {

    private final TestRedisCluster cluster;

    private final List<String> ids = new ArrayList<>();

    ClusterNodes(TestRedisCluster cluster) {
        this.cluster = cluster;
        cluster.nodes().forEach(node -> ids.add(node.command("CLUSTER", "MYID").trim()));
    }

    List<TestRedisServer> masters() {
        return cluster.nodes();
    }

    /** A Spring Data factory on the cluster as an application would configure it (Lettuce, 10 s timeout). */
    LettuceConnectionFactory newConnectionFactory() {
        ClientOptions options = ClusterClientOptions.builder()
            .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(10)))
            .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
            .build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisClusterConfiguration(cluster.nodeAddresses()),
                LettuceClientConfiguration.builder().clientOptions(options).build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Owner (index into {@link #masters()}) of each slot, from the first node's CLUSTER NODES. */
    int[] slotOwners() {
        int[] owners = new int[SlotHash.SLOT_COUNT];
        for (String line : masters().get(0).command("CLUSTER", "NODES").split("\r?\n")) {
            String[] fields = line.trim().split(" ");
            if (fields.length < 9) {
                continue;
            }
            int owner = ids.indexOf(fields[0]);
            for (int i = 8; i < fields.length; i++) {
                if (fields[i].startsWith("[")) {
                    continue; // a slot being imported or migrated: owned where the range says
                }
                String[] range = fields[i].split("-");
                int first = Integer.parseInt(range[0]);
                int last = Integer.parseInt(range[range.length - 1]);
                for (int slot = first; slot <= last; slot++) {
                    owners[slot] = owner;
                }
            }
        }
        return owners;
    }

    static int slotOf(String lockKey) {
        return SlotHash.getSlot("lock:{" + lockKey + "}");
    }

    List<ServerCounters> counters() {
        return masters().stream().map(ServerCounters::read).toList();
    }

    /** MOVED and ASK replies every master has given so far: each is a command sent to a node not owning its key. */
    long redirects() {
        long total = 0;
        for (TestRedisServer node : masters()) {
            for (String line : node.command("INFO", "errorstats").split("\r?\n")) {
                // errorstat_MOVED:count=3
                if (line.startsWith("errorstat_MOVED:") || line.startsWith("errorstat_ASK:")) {
                    total += Long.parseLong(line.substring(line.indexOf("count=") + "count=".length()).trim());
                }
            }
        }
        return total;
    }

    /** Errors of any kind every master has replied so far (INFO stats total_error_replies). */
    long errorReplies() {
        long total = 0;
        for (TestRedisServer node : masters()) {
            for (String line : node.command("INFO", "stats").split("\r?\n")) {
                if (line.startsWith("total_error_replies:")) {
                    total += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        }
        return total;
    }

    /**
     * Moves {@code slot} from its owner to the next master as redis-cli --cluster reshard does: IMPORTING on the
     * target, MIGRATING on the source, MIGRATE of its keys in batches until none is left, then NODE everywhere.
     * Returns the number of keys moved.
     */
    long migrate(int slot) {
        int from = slotOwners()[slot];
        int to = (from + 1) % masters().size();
        TestRedisServer source = masters().get(from);
        TestRedisServer target = masters().get(to);
        String slotName = String.valueOf(slot);
        target.command("CLUSTER", "SETSLOT", slotName, "IMPORTING", ids.get(from));
        source.command("CLUSTER", "SETSLOT", slotName, "MIGRATING", ids.get(to));
        long moved = 0;
        while (true) {
            String listed = source.command("CLUSTER", "GETKEYSINSLOT", slotName, "100").replaceAll("[\\[\\]\\s]", "");
            if (listed.isEmpty()) {
                break;
            }
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), String.valueOf(target.port()), "",
                    "0", "5000", "KEYS"));
            List<String> keys = List.of(listed.split(","));
            migrate.addAll(keys);
            source.command(migrate.toArray(String[]::new));
            moved += keys.size();
        }
        // the target first, then the source, then the rest: as redis-cli does
        target.command("CLUSTER", "SETSLOT", slotName, "NODE", ids.get(to));
        source.command("CLUSTER", "SETSLOT", slotName, "NODE", ids.get(to));
        for (int i = 0; i < masters().size(); i++) {
            if (i != from && i != to) {
                masters().get(i).command("CLUSTER", "SETSLOT", slotName, "NODE", ids.get(to));
            }
        }
        return moved;
    }

    /** Keys named {@code prefix + i} whose lock lives in {@code slot}, {@code count} of them. */
    static List<String> keysInSlot(String prefix, int slot, int count) {
        List<String> keys = new ArrayList<>();
        for (long i = 0; keys.size() < count; i++) {
            if (slotOf(prefix + i) == slot) {
                keys.add(prefix + i);
            }
        }
        return keys;
    }

    static Map<String, Long> sum(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> total = new HashMap<>(a);
        b.forEach((command, calls) -> total.merge(command, calls, Long::sum));
        return total;
    }
}
