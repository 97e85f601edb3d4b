package dev.leasehold.explorer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.leasehold.LockHandle;
import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.FairQueue;

/**
 * The deterministic explorer: the real engine (its key lines, hand-offs, watchdog, endings, acquisitions, waits and
 * coarse timeouts) against {@link SimRedis}, on the virtual clock, one step at a time. At each step it picks, from a
 * seeded random source, one of what may happen next: a scheduler's due task runs, the server runs the next command
 * of a connection (or it never arrives), a reply comes back (or is lost), a release message arrives, a caller starts
 * an operation, a waiting caller is interrupted or cancels, the clock moves (never past a due timer), Redis restarts
 * empty or loses a key. Callers run on their own threads; after each step the explorer waits until every caller is
 * blocked or idle, so the same seed makes the same run ({@link StepPicker} makes each step). The history goes to the
 * campaign's {@link HistoryChecker}.
 */
final class Explorer {

    /** What a run found; {@code trace}: every step, for the replay. */
    record Result(long seed, List<HistoryChecker.Violation> violations, List<String> trace, List<History.Section> sections,
            int steps, long virtualMillis) {

        boolean clean() {
            return violations.isEmpty();
        }
    }

    record Choice(double weight, String what, Runnable action) {
    }

    final long seed;

    final RunConfig config;

    final Random random;

    final SimWorld world = new SimWorld();

    final History history;

    /** The server (a quorum run: its first node, which the aims look at). */
    final SimRedis redis;

    /** A quorum run's nodes and node faults; null in a run on one server. */
    final QuorumRun quorum;

    /** A Cluster run's masters, slots and migration ({@link ClusterRun}); null in a run on one server. */
    final ClusterRun cluster;

    final List<Client.Instance> instances = new ArrayList<>();

    final List<Client> clients = new ArrayList<>();

    final Operations operations;

    /** Which operation an idle caller does next. */
    final OperationMix mix;

    final List<String> keys = new ArrayList<>();

    /** This run's pace: how eagerly the clock moves while replies are on their way (timeouts), and faults. */
    final double clockWeight;

    final double faultWeight;

    /** How eagerly callers start operations: slow runs let leases, renewals and queue timeouts play out between them. */
    final double operationWeight;

    int steps;

    /** How late a scheduler's task may run after its due time. */
    static final long TIMER_SLACK_NANOS = 20_000_000L;

    int operationsLeft;

    final Settler settler;

    final Nemesis nemesis;

    final Aims aims;

    final FreeKeyWatch watch;

    final QueueLivenessWatch queueLiveness;

    final StallAims stallAims;

    final ReaderAims readerAims;

    /** Lists what may happen next at each step and picks one. */
    private final StepPicker picker;

    private Explorer(long seed, RunConfig config) {
        this.seed = seed;
        this.config = config;
        this.random = new Random(seed);
        SimWorld.Clock.use(world);
        world.explorerThread(Thread.currentThread());
        this.history = new History(world::now);
        FairQueue queue = config.fairQueue();
        this.quorum = config.quorum() ? new QuorumRun(world, random, config, () -> instances) : null;
        this.redis = quorum != null ? quorum.nodes.get(0) : new SimRedis(world, queue, (channel, message) -> instances
            .forEach(instance -> instance.connection.published(channel)));
        if (config.cluster()) {
            keys.addAll(ClusterRun.keys(config.keys(), config.masters())); // three in one slot, one elsewhere
        }
        else {
            for (int i = 0; i < config.keys(); i++) {
                keys.add("k" + i);
            }
        }
        this.cluster = config.cluster() ? new ClusterRun(world, random, history, redis, keys, config.masters()) : null;
        if (config.replication() != RunConfig.Replication.NONE) {
            redis.replica = new SimReplica(redis, world, random, config.replication() == RunConfig.Replication.ACKNOWLEDGED);
        }
        this.operations = new Operations(history, world, random, config.lease());
        this.mix = new OperationMix(operations, random, keys, config);
        this.clockWeight = new double[] { 0.3, 1.5, 6 }[random.nextInt(3)];
        // a hand-off run always has faults (its aims are faults), and a linger replies and faults land inside
        this.faultWeight = !config.faults() ? 0 : config.handOffs() || redis.replica != null
                ? new double[] { 0.2, 1 }[random.nextInt(2)]
                : new double[] { 0, 0.2, 1 }[random.nextInt(3)];
        // a Cluster run's callers never all act at once: locks are held across ticks, whose renewals meet the migration
        this.operationWeight = (config.cluster() ? new double[] { 0.3, 0.1, 0.03 } : new double[] { 3, 0.3, 0.03 })
            [random.nextInt(3)];
        LockEngineSettings settings = LockEngineSettings.defaults()
            .withLeaseTime(config.lease())
            .withRedisTimeout(config.redisTimeout())
            .withFairQueue(queue)
            .withHandOff(config.handOffs()
                    // a linger at most the turn check: 20 ms in a turn checked every 25 ms (token reservations often),
                    // or 100 ms in one checked every second (longer than a renewal's interval: hand-offs from the block)
                    ? random.nextInt(3) == 0 ? new LockEngineSettings.HandOff(64, Duration.ofMillis(25), Duration.ofMillis(20))
                            : new LockEngineSettings.HandOff(64, Duration.ofSeconds(1), Duration.ofMillis(100))
                    : new LockEngineSettings.HandOff(random.nextBoolean() ? 64 : 2, Duration.ofMillis(25),
                    // no linger, the default (100 µs), or one long enough for replies and faults to land inside it
                    new Duration[] { Duration.ZERO, Duration.ofNanos(100_000), Duration.ofMillis(20) }[random.nextInt(3)]));
        for (int i = 0; i < config.instances(); i++) {
            int serverLanes = world.lanes.size(); // a quorum server's lanes are the instance's too (its prober, its timeouts)
            Client.Instance instance = quorum != null ? quorum.instance("i" + i, config, queue)
                    : new Client.Instance("i" + i, cluster != null ? cluster.connection("i" + i, redis)
                            : new SimConnection("i" + i, redis));
            // slow, as an instance on a loaded machine: its subscription connection's opening, callers at close
            instance.connection.slow.connectNanos = new long[] { 0, 0, 100, 400, 900 }[random.nextInt(5)] * 1_000_000L;
            instance.connection.slow.descheduleAtClose = random.nextBoolean();
            if (config.liveness()) { // a queued waiter's looks answered late (RunConfig#livenessRun)
                instance.connection.slowLooks(new long[] { 0, 100, 120 }[random.nextInt(3)] * 1_000_000L);
            }
            int lanesBefore = quorum != null ? serverLanes : world.lanes.size();
            instance.engine = new DefaultLockEngine(instance.server, settings, observer(instance));
            instance.lanes.addAll(world.lanes.subList(lanesBefore, world.lanes.size()));
            world.alias(instance.engine.instanceId(), instance.name);
            instances.add(instance);
            for (int c = 0; c < config.clientsPerInstance(); c++) {
                Client client = new Client(instance, instance.name + "c" + c, world);
                clients.add(client);
                client.start();
            }
        }
        this.operationsLeft = config.operations();
        this.settler = new Settler(world, clients);
        world.settler(() -> settler.settle(steps));
        this.nemesis = new Nemesis(world, redis, history, instances, keys, random, config, quorum);
        this.aims = new Aims(this, random);
        this.watch = new FreeKeyWatch(this);
        this.queueLiveness = new QueueLivenessWatch(this);
        this.stallAims = new StallAims(this);
        this.readerAims = new ReaderAims(this);
        this.picker = new StepPicker(this);
        // the trace of a run without a replica or quorum as it was before they came (its fingerprint compares across them)
        world.trace("seed " + seed + ": " + config.toString().replace(", replication=NONE", "").replace(", nodes=0", "")
                .replace(", masters=0", "")
                + ", clock weight " + clockWeight + ", fault weight " + faultWeight
                + ", operation weight " + operationWeight + ", " + settings.handOff()
                + (quorum == null ? "" : ", faulty nodes " + quorum.faulty + ", fence retention " + quorum.fenceRetention)
                + (cluster == null ? "" : ", " + cluster.describe()));
    }

    private LockObserver observer(Client.Instance instance) {
        return new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                history.lost(instance.name, handle.key(), handle.fencingToken());
                world.trace("   " + instance.name + " told: lost " + handle.key() + " token " + handle.fencingToken()
                        + " (" + reason + ")");
            }
        };
    }

    /** One run of {@code seed}. */
    static Result run(long seed, RunConfig config) {
        Explorer explorer = new Explorer(seed, config);
        try {
            return explorer.explore();
        }
        finally {
            explorer.clients.forEach(Client::end);
            explorer.world.lanes.forEach(lane -> lane.runner.end());
        }
    }

    private Result explore() {
        List<String> stuck = new ArrayList<>();
        try {
            settler.settle(steps); // the callers' threads start
            // callers work, faults happen
            while (steps < config.maxSteps() && (operationsLeft > 0 || busy())) {
                picker.step(true);
            }
            // every caller closes what it holds, then every engine closes
            faultsOver();
            while (steps < config.maxSteps() * 2 && (busy() || !operations.open.isEmpty())) {
                closeOne();
                picker.step(false);
            }
            for (Client.Instance instance : instances) {
                if (!instance.closing) {
                    Client client = clients.stream().filter(each -> each.instance == instance && each.idle()).findFirst()
                        .orElse(null);
                    if (client != null) {
                        operations.closeEngine(client);
                    }
                }
            }
            settler.settle(steps);
            // and what is still on its way arrives (Redis runs what was sent before the connection closed)
            while (steps < config.maxSteps() * 3 && (busy() || instances.stream().anyMatch(instance -> !instance.closed
                    || instance.wires.stream().anyMatch(wire -> wire.hasSent() || wire.hasAnswered() || wire.hasPubSub())))) {
                picker.step(false);
            }
            settler.settle(steps);
        }
        catch (IllegalStateException ex) {
            stuck.add(ex.getMessage());
        }
        return RunCheck.check(this, stuck);
    }

    private boolean busy() {
        synchronized (operations) {
            return clients.stream().anyMatch(client -> !client.idle()) || !operations.pending.isEmpty()
                    || world.lanes.stream().anyMatch(lane -> !lane.runner.idle())
                    // a slow look's reply held on its way (RunConfig#livenessRun)
                    || instances.stream().anyMatch(instance -> instance.connection.replyHeld());
        }
    }

    /** After the faults: what was lost stays lost, but what is on its way arrives (no more drops). */
    private void faultsOver() {
        world.trace("-- callers close what they hold; no more faults");
    }

    /** In the closing phase: an idle client closes one of the sections it may close. */
    private void closeOne() {
        for (Client client : clients) {
            if (client.idle() && !client.instance.closing) {
                List<Section> mine = operations.sections(client.instance, client);
                if (!mine.isEmpty()) {
                    operations.close(client, mine.get(0), random.nextBoolean());
                    settler.settle(steps);
                    return;
                }
            }
        }
    }
}
