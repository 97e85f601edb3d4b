package dev.leasehold.explorer;

import java.time.Duration;

import dev.leasehold.engine.server.FairQueue;

/**
 * The shape of an {@link Explorer} run. {@code handOffs}: a run shaped for local hand-offs (one instance, three
 * callers on one key, blocking waits long enough to queue, a linger always); {@code liveness}: one shaped for the fair
 * queue's liveness (see {@link #livenessRun}); {@code fairQueue}: the fair queue's timing, the server's and the
 * engines'; {@code replication}: a replica and failovers ({@link SimReplica}), with or without replica acknowledgement;
 * {@code nodes}: a quorum run's simulated nodes (0: one server); {@code masters}: a Cluster run's masters (0: no Cluster,
 * see {@link ClusterRun}).
 */
record RunConfig(int instances, int clientsPerInstance, int keys, int operations, int maxSteps, boolean faults,
        Duration lease, Duration redisTimeout, FairQueue fairQueue, boolean handOffs, boolean liveness,
        Replication replication, int nodes, int masters) {

    /**
     * The simulated Redis's replication: none; one replica and failovers, without acknowledgement (a failover may
     * lose locks; their holders must be told, tokens never go back); or with {@code leasehold.replica-ack.replicas=1}
     * (a grant the replica acknowledged survives a failover).
     */
    enum Replication {
        NONE, FAILOVER, ACKNOWLEDGED
    }

    /** This run with a replica. */
    RunConfig replicated(Replication replication) {
        return new RunConfig(instances, clientsPerInstance, keys, operations, maxSteps, faults, lease, redisTimeout,
                fairQueue, handOffs, liveness, replication, nodes, masters);
    }

    static RunConfig standard() {
        return new RunConfig(2, 2, 1, 24, 6000, true, Duration.ofSeconds(3), Duration.ofMillis(500), FairQueue.DEFAULTS,
                false, false, Replication.NONE, 0, 0);
    }

    /**
     * Hand-offs, lingers and token reservations, where issue 31's items 2 and 3 lived: with two instances most
     * turns are gated by the other's queue entry, and a run made about one hand-off in two runs.
     */
    static RunConfig handOffRun() {
        // a lease of 1.5 s: a renewal every 500 ms, so that renewals meet hand-offs and lingers
        return new RunConfig(1, 3, 1, 30, 6000, true, Duration.ofMillis(1500), Duration.ofMillis(500), FairQueue.DEFAULTS,
                true, false, Replication.NONE, 0, 0);
    }

    /**
     * The fair queue's liveness (one server), where a lone queued waiter's instance must keep its liveness key
     * ({@link QueueLivenessWatch}): three instances of one caller each, so that a waiter is alone in its instance and
     * others may queue behind it (blocking waits of seconds, {@link Operations}; waits seldom stopped at random, see
     * {@link #stops}); the tightest timing a user may set (an entry timeout of twice the refresh
     * interval), a short refresh interval and Redis timeout, and a queued waiter's looks answered late (see
     * {@link SimConnection#slowLooks}): a look takes a fifth to a quarter of a refresh interval (or no time), so that within a few
     * looks one of the heartbeat's beats comes while the waiter is awake for it (as in QueueLivenessTest).
     */
    static RunConfig livenessRun() {
        FairQueue tightest = new FairQueue(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofMillis(500), 16);
        // a Redis timeout of 200 ms: a try, the subscription after it and a refresh interval fit in the entry timeout
        return new RunConfig(3, 1, 1, 24, 6000, true, Duration.ofMillis(1500), Duration.ofMillis(200), tightest, false,
                true, Replication.NONE, 0, 0);
    }

    /**
     * The quorum mode (issue 31 item 2): each instance runs the real quorum server over {@code nodes} simulated nodes
     * (3, or 5), see {@link QuorumRun}; two instances of two callers on one key, as a standard run, with room for the
     * steps of every node's commands.
     */
    static RunConfig quorumRun(int nodes) {
        return new RunConfig(2, 2, 1, 24, 15000, true, Duration.ofSeconds(3), Duration.ofMillis(500), FairQueue.DEFAULTS,
                false, false, Replication.NONE, nodes, 0);
    }

    boolean quorum() {
        return nodes > 0;
    }

    /**
     * A Cluster run (issue 31 item 2, {@link ClusterRun}): two instances of three callers on six keys, five of them
     * in one slot, so that an instance holds several locks of the slot that migrates and its watchdog renews them in
     * batches (a lease of 1.5 s: a tick every 500 ms); {@code masters} 2 or 3.
     */
    static RunConfig clusterRun(int masters) {
        return new RunConfig(2, 3, 6, 40, 9000, true, Duration.ofMillis(1500), Duration.ofMillis(500), FairQueue.DEFAULTS,
                false, false, Replication.NONE, 0, masters);
    }

    boolean cluster() {
        return masters > 0;
    }

    /**
     * How eagerly a wait is stopped at random (interrupted, cancelled) at each step: a hand-off run stops waits where it
     * aims, a liveness run lets them last several of the heartbeat's beats.
     */
    double stops() {
        return handOffs ? 0.05 : liveness ? 0.001 : 0.3;
    }

    /**
     * Every seed with {@code -Dexplorer.quorum=true} is a quorum run (on five nodes one time in four, else three), with
     * {@code -Dexplorer.liveness=true} a liveness run, with {@code -Dexplorer.replica-ack=true} a standard run with
     * replica acknowledgement, with {@code -Dexplorer.failover=true} one with a replica and no acknowledgement; else
     * every eighth seed (6 more than a multiple of 8) is a quorum run, every fourth (a multiple of 4) a hand-off run,
     * every seed with {@code -Dexplorer.hand-offs=true}; every eighth (2 more than a multiple of 8) a liveness run, 5
     * more a standard run with replica acknowledgement, 7 more one with a replica and no acknowledgement; the others
     * are the standard runs they always were, but one in four of those 3 more than a multiple of 8 (27 more than a
     * multiple of 32) is a Cluster run when no option asks for another kind; with {@code -Dexplorer.cluster=true} every
     * seed is one (on two masters one time in four, else three).
     */
    static RunConfig forSeed(long seed) {
        if (Boolean.getBoolean("explorer.cluster")) {
            return clusterRun(Math.floorMod(seed, 4) == 1 ? 2 : 3);
        }
        if (Boolean.getBoolean("explorer.quorum") || seed % 8 == 6) {
            return quorumRun(Math.floorMod(seed / 8, 4) == 3 || Math.floorMod(seed, 8) == 3 ? 5 : 3);
        }
        boolean otherKind = java.util.stream.Stream.of("liveness", "replica-ack", "failover", "hand-offs")
            .anyMatch(option -> Boolean.getBoolean("explorer." + option));
        if (!otherKind && seed % 32 == 27) {
            return clusterRun(Math.floorMod(seed / 32, 4) == 3 ? 2 : 3);
        }
        if (Boolean.getBoolean("explorer.liveness")) {
            return livenessRun();
        }
        if (Boolean.getBoolean("explorer.replica-ack") || !Boolean.getBoolean("explorer.hand-offs") && seed % 8 == 5) {
            return standard().replicated(Replication.ACKNOWLEDGED);
        }
        if (Boolean.getBoolean("explorer.failover") || !Boolean.getBoolean("explorer.hand-offs") && seed % 8 == 7) {
            return standard().replicated(Replication.FAILOVER);
        }
        if (seed % 4 == 0 || Boolean.getBoolean("explorer.hand-offs")) {
            return handOffRun();
        }
        return seed % 8 == 2 ? livenessRun() : standard();
    }
}
