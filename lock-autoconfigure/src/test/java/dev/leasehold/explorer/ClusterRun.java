package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.LockKeys;

/**
 * A Cluster run (issue 31 item 2, "Cluster ASK during a migration"): each instance's connection is a
 * {@link SimClusterConnection} to a {@link SimCluster} of two or three masters, whose watchdog renews its locks with the
 * production {@code RenewalBatches}; the run's keys are chosen so that all but one share a slot (a batch then holds
 * several locks of one slot) and one lives on another master. Its steps: a migration of the shared slot starts while
 * one of its locks is held, moves its locks to another master one at a time, each a step the explorer interleaves with
 * the watchdog's calls and their redirections, and hands the slot over; a client refreshes its view of the slots. Its
 * rule, S4 ({@link #check}): no renewal answer the engine reads says "not held" for a lock the slots' data still holds
 * for that owner token (the false loss of issue 31's defect 5: a held lock reported lost).
 */
final class ClusterRun {

    final SimCluster cluster;

    private final SimWorld world;

    private final Random random;

    private final History history;

    /** The run's keys: all but one in one slot (the one that migrates), one on another master. */
    final List<String> keys;

    private final Map<String, String> logicalKeys = new HashMap<>();

    /** A renewal answered "not held" while the slots' data held the lock for its owner token (history time). */
    record NotHeld(String instance, String key, String token, String value, String migration, long at) {
    }

    final List<NotHeld> notHeld = new ArrayList<>();

    private final List<SimClusterConnection> connections = new ArrayList<>();

    /**
     * When the migration's next step may come (virtual ns): a pause the seed draws after each step (up to 600 ms, a
     * tick is 500 ms), so that the watchdog's calls meet the slot half moved, as they meet a real reshard that moves
     * keys in batches.
     */
    private long nextStepAt = Long.MIN_VALUE;

    ClusterRun(SimWorld world, Random random, History history, SimRedis data, List<String> keys, int masters) {
        this.world = world;
        this.random = random;
        this.history = history;
        this.keys = List.copyOf(keys);
        this.cluster = new SimCluster(masters, data, keys);
        keys.forEach(key -> logicalKeys.put(SimCluster.names(key).lock(), key));
    }

    /**
     * The keys of a Cluster run on {@code masters} masters: {@code count - 1} names whose locks share k0's slot (found
     * by trying k1, k2, ...: about one name in 16,384 shares a slot, a few ms), and one whose slot another master serves.
     */
    static List<String> keys(int count, int masters) {
        List<String> keys = new ArrayList<>(List.of("k0"));
        int shared = SimCluster.slot(SimCluster.names("k0").lock());
        String elsewhere = null;
        for (int i = 1; keys.size() < count - 1 || elsewhere == null; i++) {
            int slot = SimCluster.slot(SimCluster.names("k" + i).lock());
            if (slot == shared && keys.size() < count - 1) {
                keys.add("k" + i);
            }
            else if (elsewhere == null && SimCluster.initialMaster(slot, masters) != SimCluster.initialMaster(shared, masters)) {
                elsewhere = "k" + i;
            }
        }
        keys.add(elsewhere);
        return keys;
    }

    SimClusterConnection connection(String name, SimRedis redis) {
        SimClusterConnection connection = new SimClusterConnection(name, redis, this);
        connections.add(connection);
        return connection;
    }

    /** The logical key of a lock key (for the trace). */
    String logicalKey(String lockKey) {
        return logicalKeys.getOrDefault(lockKey, lockKey);
    }

    String describe() {
        StringBuilder text = new StringBuilder("cluster of " + cluster.masters + " masters:");
        for (String key : keys) {
            int slot = SimCluster.slot(SimCluster.names(key).lock());
            text.append(' ').append(key).append(" slot ").append(slot).append(" on m").append(cluster.masterOf(slot));
        }
        return text.toString();
    }

    // ---- the migration's steps

    /** The slot that migrates: the one all but one of the run's locks share. */
    private int sharedSlot() {
        return SimCluster.slot(SimCluster.names(keys.get(0)).lock());
    }

    private List<String> keysOf(int slot) {
        return keys.stream().filter(key -> SimCluster.slot(SimCluster.names(key).lock()) == slot).toList();
    }

    /**
     * Offers the migration's next step once its pause is over (at once, aimed, when a renewal's node call is on its
     * way: the call then meets a slot that changed since its batch was made), and a client's topology refresh where its
     * view is behind.
     */
    void add(List<Explorer.Choice> choices) {
        int slot = sharedSlot();
        boolean nodeCallOnItsWay = connections.stream().anyMatch(connection -> world.now() - connection.pausedUntil >= 0
                && connection.anySent(what -> what.contains(" renew-node ")));
        double weight = nodeCallOnItsWay ? 2 : world.now() - nextStepAt >= 0 ? 0.5 : 0;
        if (!cluster.migrating()) {
            // aimed: a migration starts while the slot holds two locks or more (renewed in one batch, where it is one
            // instance's) or, less often, one
            long held = keysOf(slot).stream().filter(key -> cluster.data.lockValue(SimCluster.names(key)) != null).count();
            if (held > 0) {
                choices.add(new Explorer.Choice(held > 1 ? weight : 0.1 * weight, null, () -> startMigration(slot)));
            }
        }
        else if (!cluster.allMoved()) {
            choices.add(new Explorer.Choice(weight, null, () -> {
                        if (nodeCallOnItsWay) {
                            world.trace("aim: a lock of the slot moves while a renewal's node call is on its way");
                        }
                        String key = cluster.moveNext();
                        world.trace("CLUSTER MIGRATE " + key + "'s keys: " + cluster.describeMigration());
                        paused();
                    }));
        }
        else {
            choices.add(new Explorer.Choice(weight, null, () -> {
                world.trace("CLUSTER SETSLOT NODE on every master: " + cluster.describeMigration());
                cluster.finishMigration();
                paused();
            }));
        }
        for (SimClusterConnection connection : connections) {
            boolean behind = cluster.handedOver().entrySet().stream()
                .anyMatch(master -> connection.masterOf(master.getKey()) != master.getValue());
            if (behind) {
                choices.add(new Explorer.Choice(0.05, null, () -> {
                    world.trace("CLUSTER " + connection.name + "'s client refreshes its view of the slots");
                    connection.refreshTopology();
                }));
            }
        }
    }

    private void startMigration(int slot) {
        int from = cluster.masterOf(slot);
        int to = (from + 1 + random.nextInt(cluster.masters - 1)) % cluster.masters;
        List<String> order = new ArrayList<>(keysOf(slot));
        Collections.shuffle(order, random);
        cluster.startMigration(slot, to, order);
        world.trace("CLUSTER SETSLOT IMPORTING on m" + to + ", MIGRATING on m" + from + ": " + cluster.describeMigration());
        paused();
    }

    private void paused() {
        nextStepAt = world.now() + random.nextInt(600) * 1_000_000L;
    }

    // ---- S4

    /** A renewal {@code connection}'s engine reads as "not held": kept when the slots' data holds it for the owner. */
    void answeredNotHeld(SimClusterConnection connection, LockKeys keys, String token) {
        String value = cluster.data.lockValue(keys);
        if (SimOwners.lastFence(value, token) != null) {
            String held = world.tokenName(token) + value.substring(token.length());
            notHeld.add(new NotHeld(connection.name, keys.logicalKey(), world.tokenName(token), held,
                    cluster.migrating() ? cluster.describeMigration() : "no migration", history.now()));
            world.trace("   (S4) " + connection.name + "'s engine reads " + keys.logicalKey() + " "
                    + world.tokenName(token) + " not held, which Redis holds for it");
        }
    }

    /**
     * S4: an answer "not held" for a lock Redis still held for that owner token is a false loss (the engine reports a
     * held lock lost, or would, were it still holding it); owner tokens are never reused, so the data at the moment the
     * engine reads the answer still holding it proves the answer wrong, whenever Redis computed it.
     */
    void check(List<HistoryChecker.Violation> violations) {
        for (NotHeld wrong : notHeld) {
            boolean told = history.losses().stream().anyMatch(loss -> loss.instance().equals(wrong.instance())
                    && loss.key().equals(wrong.key()) && loss.at() >= wrong.at());
            violations.add(new HistoryChecker.Violation(wrong.at(), "S4 a renewal answer told " + wrong.instance()
                    + "'s engine that it no longer held " + wrong.key() + " (" + wrong.token()
                    + ") while Redis still held it for that owner (" + wrong.value() + ")"
                    + (told ? "; it reported the lock lost" : "") + " (" + wrong.migration() + ")"));
        }
    }
}
