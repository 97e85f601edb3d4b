package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.leasehold.engine.redis.RenewalBatchesBridge;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated Cluster answers as a real one: renew_exclusive_node.lua and renew_exclusive_many.lua (the production
 * text) sent to every master of a real three-master Cluster, with and without ASKING, while one slot is in mid-migration
 * (some of its locks moved, some not, some absent, the tokens right or wrong), and again once the slot was handed over,
 * against {@link SimCluster} on the same data: every reply, redirect (ASK or MOVED, to the same master) and TRYAGAIN
 * compared. Leases of 30 s, so that none runs out on either clock.
 */
@Timeout(120)
class SimClusterMatchesScriptsTest {

    private static TestRedisCluster cluster;

    /** What the real Cluster answered, by kind: every kind must come up (else the comparison proves little). */
    private static final java.util.Set<String> seen = new java.util.TreeSet<>();

    /** Slots handed over by earlier seeds (the real Cluster keeps them): slot to master. */
    private static final Map<Integer, Integer> handedOver = new HashMap<>();

    @BeforeAll
    static void startCluster() {
        cluster = TestRedisCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void renewalScriptsGetTheClustersAnswersDuringAndAfterAMigration() {
        for (int seed = 1; seed <= 16; seed++) {
            compare(seed);
        }
        assertThat(seen).containsExactlyInAnyOrder("ASK", "MOVED", "TRYAGAIN", "answered 1", "answered 0",
                "answered -1", "answered -2");
    }

    private static void compare(long seed) {
        Random random = new Random(seed);
        List<TestRedisServer> nodes = cluster.nodes();
        nodes.forEach(node -> node.command("FLUSHALL"));
        // six locks in one slot, two elsewhere
        List<String> names = new ArrayList<>(namesInOneSlot("s" + seed + "-", 6));
        names.add("o" + seed + "-a");
        names.add("o" + seed + "-b");
        SimRedis data = new SimRedis(new SimWorld(), FairQueue.DEFAULTS, (channel, message) -> {
        });
        SimCluster sim = new SimCluster(3, data, names);
        handedOver.forEach((slot, master) -> {
            sim.startMigration(slot, master, List.of());
            sim.finishMigration();
        });
        for (String name : names) {
            if (random.nextInt(4) > 0) { // held by its own token, else absent
                String key = SimCluster.names(name).lock();
                String value = "tok-" + name + (random.nextBoolean() ? "@" : "#") + (1 + random.nextInt(100));
                nodes.get(sim.masterOf(SimCluster.slot(key))).command("SET", key, value, "PX", "30000");
                data.strings.set(key, value, 30_000);
            }
        }
        int slot = SimCluster.slot(SimCluster.names(names.get(0)).lock());
        int source = sim.masterOf(slot);
        int target = (source + 1 + random.nextInt(2)) % 3;
        List<String> order = new ArrayList<>(names.subList(0, 6));
        Collections.shuffle(order, random);
        nodes.get(target).command("CLUSTER", "SETSLOT", String.valueOf(slot), "IMPORTING", id(source));
        nodes.get(source).command("CLUSTER", "SETSLOT", String.valueOf(slot), "MIGRATING", id(target));
        sim.startMigration(slot, target, order);
        move(sim, nodes, source, target, 1 + random.nextInt(5));
        calls(seed, random, sim, names, "mid-migration");
        move(sim, nodes, source, target, 6);
        for (TestRedisServer node : nodes) {
            node.command("CLUSTER", "SETSLOT", String.valueOf(slot), "NODE", id(target));
        }
        sim.finishMigration();
        handedOver.put(slot, target);
        calls(seed, random, sim, names, "handed over");
    }

    /** MIGRATE of the next {@code count} locks (the ones that exist) from the source to the target. */
    private static void move(SimCluster sim, List<TestRedisServer> nodes, int source, int target, int count) {
        List<String> migrate = new ArrayList<>(List.of("MIGRATE", nodes.get(target).host(),
                String.valueOf(nodes.get(target).port()), "", "0", "5000", "KEYS"));
        for (int i = 0; i < count && !sim.allMoved(); i++) {
            String name = sim.moveNext();
            if (sim.data.lockValue(SimCluster.names(name)) != null) {
                migrate.add(SimCluster.names(name).lock());
            }
        }
        if (migrate.size() > 7) {
            assertThat(nodes.get(source).command(migrate.toArray(String[]::new))).isEqualTo("OK");
        }
    }

    /** Random node calls and per-slot batches on every master, with and without ASKING, compared. */
    private static void calls(long seed, Random random, SimCluster sim, List<String> names, String when) {
        for (int call = 0; call < 40; call++) {
            int node = random.nextInt(3);
            boolean asking = random.nextBoolean();
            boolean onNode = random.nextInt(3) > 0;
            List<String> picked = new ArrayList<>(onNode ? names : names.subList(0, 6));
            Collections.shuffle(picked, random);
            picked = picked.subList(0, 1 + random.nextInt(onNode ? 5 : 3));
            List<String> keys = picked.stream().map(name -> SimCluster.names(name).lock()).toList();
            List<String> tokens = picked.stream().map(name -> random.nextInt(5) == 0 ? "tok-other" : "tok-" + name).toList();
            List<String> command = new ArrayList<>(List.of("EVAL", onNode ? RenewalBatchesBridge.renewOnNodeScript()
                    : RenewalBatchesBridge.renewManyScript()));
            List<String> args = new ArrayList<>(List.of("30000"));
            Object expected;
            if (onNode) {
                command.addAll(List.of("1", keys.get(0)));
                args.add(tokens.get(0));
                for (int i = 1; i < keys.size(); i++) {
                    args.add(keys.get(i));
                    args.add(tokens.get(i));
                }
                expected = sim.renewOnNode(node, asking, keys.get(0), args);
            }
            else {
                command.add(String.valueOf(keys.size()));
                command.addAll(keys);
                args.addAll(tokens);
                expected = sim.renewBatchOn(node, asking, keys, args);
            }
            command.addAll(args);
            String actual = real(node, asking, command);
            if (!actual.startsWith("[")) {
                seen.add(actual.split(" ")[0]);
            }
            for (String answer : List.of("1", "0", "-1", "-2")) {
                if (actual.matches("\\[(.*, )?" + answer + "(, .*)?]")) {
                    seen.add("answered " + answer);
                }
            }
            assertThat(actual).as("seed %d, %s: %s on m%d%s, %s %s", seed, when, onNode ? "node call" : "batch", node,
                    asking ? " with ASKING" : "", picked, tokens).isEqualTo(simulated(expected));
        }
    }

    private static String real(int node, boolean asking, List<String> command) {
        TestRedisServer server = cluster.nodes().get(node);
        List<String[]> commands = new ArrayList<>();
        if (asking) {
            commands.add(new String[] { "ASKING" });
        }
        commands.add(command.toArray(String[]::new));
        try {
            List<String> replies = server.commands(commands);
            return replies.get(replies.size() - 1);
        }
        catch (IllegalStateException ex) {
            String error = ex.getMessage().replace("Redis error: ", "");
            String[] words = error.split(" ");
            if (words[0].equals("ASK") || words[0].equals("MOVED")) {
                String port = words[2].substring(words[2].lastIndexOf(':') + 1);
                return words[0] + " m" + cluster.nodes().stream().map(each -> String.valueOf(each.port())).toList().indexOf(port);
            }
            return words[0];
        }
    }

    private static String simulated(Object reply) {
        if (reply instanceof SimCluster.Redirect redirect) {
            return redirect.toString();
        }
        if (reply instanceof RuntimeException error) {
            String message = error.getMessage(); // "Redis refused the command: simulated: TRYAGAIN ..."
            return message.substring(message.indexOf("simulated: ") + "simulated: ".length()).split(" ")[0];
        }
        return reply.toString();
    }

    private static String id(int node) {
        return cluster.nodes().get(node).command("CLUSTER", "MYID");
    }

    /** {@code count} names whose locks share the slot of {@code <prefix>0}'s. */
    private static List<String> namesInOneSlot(String prefix, int count) {
        int slot = SimCluster.slot(SimCluster.names(prefix + "0").lock());
        List<String> names = new ArrayList<>();
        for (int i = 0; names.size() < count; i++) {
            if (SimCluster.slot(SimCluster.names(prefix + i).lock()) == slot) {
                names.add(prefix + i);
            }
        }
        return names;
    }
}
