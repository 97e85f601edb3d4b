package dev.leasehold.explorer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import dev.leasehold.campaign.History;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNode;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;

/**
 * A quorum run (issue 31 item 2): every engine instance runs the real {@link QuorumLockServer} over one
 * {@link SimNodeConnection} to each of N independent {@link SimRedis} nodes (one world, one virtual clock), as the
 * quorum auto-configuration builds it. And the nodes' faults, kept to a minority of the nodes chosen by the seed (the
 * {@code faulty} nodes), as the quorum's promises assume: such a node restarts empty or loses a lock key; any one
 * instance's connection to any one node may be cut off for a while (that loses no data).
 */
final class QuorumRun {

    /** Redlock's clock drift allowance (the auto-configuration's default). */
    static final double CLOCK_DRIFT_FACTOR = 0.01;

    final List<SimRedis> nodes = new ArrayList<>();

    /** The nodes the nemesis may wipe or lose keys on: fewer than a majority. */
    final Set<Integer> faulty = new TreeSet<>();

    /** Every fencing token block a quorum handed out, in the order the quorum decided them (see {@link QuorumTap}). */
    final List<SimRedis.Issued> issued = new ArrayList<>();

    /** Every lease's validity as the quorums said it (Q1). */
    final QuorumValidity validity = new QuorumValidity();

    /** The counters' retention (null: they never expire, the default). */
    final Duration fenceRetention;

    private final SimWorld world;

    private final Random random;

    QuorumRun(SimWorld world, Random random, RunConfig config, java.util.function.Supplier<List<Client.Instance>> instances) {
        this.world = world;
        this.random = random;
        for (int n = 0; n < config.nodes(); n++) {
            int node = n;
            nodes.add(new SimRedis(world, config.fairQueue(), (channel, message) -> instances.get()
                .forEach(instance -> instance.wires.get(node).published(channel))));
        }
        int minority = (config.nodes() - 1) / 2;
        while (faulty.size() < minority) {
            faulty.add(random.nextInt(config.nodes()));
        }
        // a retention one run in four: tokens then rest on the clients' clock too (docs/quorum.md)
        this.fenceRetention = random.nextInt(4) == 0 ? Duration.ofSeconds(10) : null;
    }

    /** The client's clock in µs: the same virtual clock for every client, on the servers' epoch. */
    long clientMicros() {
        return SimStrings.EPOCH_MICROS + world.now() / 1000;
    }

    /** An instance whose engine runs on a quorum of this run's nodes, built as the auto-configuration does. */
    Client.Instance instance(String name, RunConfig config, FairQueue queue) {
        List<SimConnection> wires = new ArrayList<>();
        List<QuorumNode> quorumNodes = new ArrayList<>();
        for (int n = 0; n < nodes.size(); n++) {
            SimNodeConnection wire = new SimNodeConnection(name + "/n" + n, nodes.get(n), this::clientMicros);
            wires.add(wire);
            quorumNodes.add(new QuorumNode("n" + n, wire, null));
        }
        QuorumLockServer quorum = new QuorumLockServer(quorumNodes, config.redisTimeout(), config.lease(),
                CLOCK_DRIFT_FACTOR).fairQueue(queue).fenceRetention(fenceRetention);
        QuorumTap tap = new QuorumTap(quorum, world, issued, name, validity);
        wires.forEach(wire -> ((SimNodeConnection) wire).started());
        Client.Instance instance = new Client.Instance(name, wires.get(0), wires, tap.said);
        instance.quorumNodes.addAll(quorumNodes);
        instance.server = tap;
        instance.afterEngineClose = tap::close;
        return instance;
    }

    // ---- the nodes' faults (Nemesis asks for them in a quorum run)

    private int someFaultyNode() {
        List<Integer> candidates = new ArrayList<>(faulty);
        return candidates.get(random.nextInt(candidates.size()));
    }

    /**
     * Aimed (offered only while the window is open): a faulty node restarts empty while a key rests on a bare majority
     * that includes it, where a node counted again before its restart delay ends would let a second owner in.
     */
    void aims(List<Explorer.Choice> choices, double faults, History history, List<Client.Instance> instances,
            List<String> keys) {
        int majority = nodes.size() / 2 + 1;
        for (String key : keys) {
            LockKeys names = LockKeys.of("lock:", key);
            List<Integer> holding = new ArrayList<>();
            for (int n = 0; n < nodes.size(); n++) {
                if (nodes.get(n).lockValue(names) != null || !nodes.get(n).liveReaders(names).isEmpty()) {
                    holding.add(n);
                }
            }
            if (holding.size() != majority) {
                continue;
            }
            for (int node : faulty) {
                if (holding.contains(node)) {
                    choices.add(new Explorer.Choice(0.5 * faults, "aim: restart a node " + key + " rests on with a bare"
                            + " majority", () -> restart(node, history, instances)));
                }
            }
        }
    }

    /** A faulty node restarts empty: every instance's connection to it drops, and its quorum probes it again. */
    void restart(History history, List<Client.Instance> instances) {
        restart(someFaultyNode(), history, instances);
    }

    private void restart(int node, History history, List<Client.Instance> instances) {
        world.trace("NEMESIS node n" + node + " restarts empty");
        long start = history.now();
        nodes.get(node).flushAll();
        for (Client.Instance instance : instances) {
            QuorumNode quorumNode = instance.quorumNodes.get(node);
            quorumNode.disconnected(); // as its Lettuce listener hears the connection drop
            instance.wires.get(node).restarted();
            if (!instance.closing) {
                quorumNode.probe(); // as it hears the connection come back
                world.settle();
            }
        }
        // the node's counters are gone: a token may repeat if it was the only node two majorities share (documented)
        history.fault("node-restart-empty", "redis n" + node, start, history.now());
    }

    /** One instance's connection to one node carries nothing for a while (any node: no data is lost). */
    void cutOff(History history, List<Client.Instance> instances, RunConfig config) {
        Client.Instance instance = instances.get(random.nextInt(instances.size()));
        int node = random.nextInt(nodes.size());
        long nanos = (long) (random.nextDouble() * config.lease().toNanos() * 1.5);
        SimConnection wire = instance.wires.get(node);
        wire.pausedUntil = world.now() + nanos;
        world.trace(String.format(Locale.ROOT, "NEMESIS %s's connection is cut off for %.1f ms", wire.name, nanos / 1e6));
        history.fault("cut-off", instance.name, history.now(), history.now() + nanos, config.redisTimeout().toNanos());
    }

    /** A faulty node loses a lock key (as by its failover): the majority elsewhere still holds it. */
    void loseKey(History history, String key) {
        int node = someFaultyNode();
        world.trace("NEMESIS node n" + node + " loses the lock of " + key);
        long start = history.now();
        nodes.get(node).lose(LockKeys.of("lock:", key));
        history.fault("node-delete-key", "redis n" + node + " " + key, start, history.now());
    }
}
