package dev.leasehold.explorer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.LockHandle;
import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.support.CoarseTimeouts;

/**
 * The deterministic explorer: the real engine (its key lines, hand-offs, watchdog, endings, acquisitions, waits and
 * coarse timeouts) against {@link SimRedis}, on the virtual clock, one step at a time. At each step it picks, from a
 * seeded random source, one of what may happen next: a scheduler's due task runs, the server runs the next command
 * of a connection (or it never arrives), a reply comes back (or is lost), a release message arrives, a caller starts
 * an operation, a waiting caller is interrupted or cancels, the clock moves (never past a due timer), Redis restarts
 * empty or loses a key. Callers run on their own threads; after each step the explorer waits until every caller is
 * blocked or idle, so the same seed makes the same run. The history goes to the campaign's {@link HistoryChecker}.
 */
final class Explorer {

    /** The shape of a run. */
    record Config(int instances, int clientsPerInstance, int keys, int operations, int maxSteps, boolean faults,
            Duration lease, Duration redisTimeout, int tokenBlock) {

        static Config standard() {
            return new Config(2, 2, 1, 24, 6000, true, Duration.ofSeconds(3), Duration.ofMillis(500), 16);
        }
    }

    /** What a run found; {@code trace}: every step, for the replay. */
    record Result(long seed, List<HistoryChecker.Violation> violations, List<String> trace, List<History.Section> sections,
            int steps, long virtualMillis) {

        boolean clean() {
            return violations.isEmpty();
        }
    }

    private record Choice(double weight, String what, Runnable action) {
    }

    private final long seed;

    private final Config config;

    private final Random random;

    private final SimWorld world = new SimWorld();

    private final History history;

    private final SimRedis redis;

    private final List<Client.Instance> instances = new ArrayList<>();

    private final List<Client> clients = new ArrayList<>();

    private final Operations operations;

    private final List<String> keys = new ArrayList<>();

    /** This run's pace: how eagerly the clock moves while replies are on their way (timeouts), and faults. */
    private final double clockWeight;

    private final double faultWeight;

    /** How eagerly callers start operations: slow runs let leases, renewals and queue timeouts play out between them. */
    private final double operationWeight;

    private int steps;

    /** How late a scheduler's task may run after its due time. */
    static final long TIMER_SLACK_NANOS = 20_000_000L;

    private static final boolean DEBUG = Boolean.getBoolean("explorer.debug");

    private int operationsLeft;

    private Explorer(long seed, Config config) {
        this.seed = seed;
        this.config = config;
        this.random = new Random(seed);
        SimWorld.Clock.use(world);
        world.explorerThread(Thread.currentThread());
        this.history = new History(world::now);
        FairQueue queue = new FairQueue(FairQueue.DEFAULTS.entryTimeout(), FairQueue.DEFAULTS.claimTimeout(),
                FairQueue.DEFAULTS.refreshInterval(), config.tokenBlock);
        this.redis = new SimRedis(world, queue, (channel, message) -> instances
            .forEach(instance -> instance.connection.published(channel)));
        for (int i = 0; i < config.keys; i++) {
            keys.add("k" + i);
        }
        this.operations = new Operations(history, world, random, keys, config.lease);
        this.clockWeight = new double[] { 0.3, 1.5, 6 }[random.nextInt(3)];
        this.faultWeight = config.faults ? new double[] { 0, 0.2, 1 }[random.nextInt(3)] : 0;
        this.operationWeight = new double[] { 3, 0.3, 0.03 }[random.nextInt(3)];
        LockEngineSettings settings = LockEngineSettings.defaults()
            .withLeaseTime(config.lease)
            .withRedisTimeout(config.redisTimeout)
            .withFairQueue(queue)
            .withHandOff(new LockEngineSettings.HandOff(random.nextBoolean() ? 64 : 2, Duration.ofMillis(25),
                    random.nextBoolean() ? Duration.ZERO : Duration.ofNanos(100_000)));
        for (int i = 0; i < config.instances; i++) {
            Client.Instance instance = new Client.Instance("i" + i, new SimConnection("i" + i, redis));
            int lanesBefore = world.lanes.size();
            instance.engine = new DefaultLockEngine(instance.connection, settings, observer(instance));
            instance.lanes.addAll(world.lanes.subList(lanesBefore, world.lanes.size()));
            world.alias(instance.engine.instanceId(), instance.name);
            instances.add(instance);
            for (int c = 0; c < config.clientsPerInstance; c++) {
                Client client = new Client(instance, instance.name + "c" + c, world);
                clients.add(client);
                client.start();
            }
        }
        this.operationsLeft = config.operations;
        world.trace("seed " + seed + ": " + config + ", clock weight " + clockWeight + ", fault weight " + faultWeight
                + ", operation weight " + operationWeight + ", " + settings.handOff());
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
    static Result run(long seed, Config config) {
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
            // callers work, faults happen
            while (steps < config.maxSteps && (operationsLeft > 0 || busy())) {
                step(true);
            }
            // every caller closes what it holds, then every engine closes
            faultsOver();
            while (steps < config.maxSteps * 2 && (busy() || !operations.open.isEmpty())) {
                closeOne();
                step(false);
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
            // and what is still on its way arrives (Redis runs what was sent before the connection closed)
            while (steps < config.maxSteps * 3 && (busy() || instances.stream().anyMatch(instance -> !instance.closed
                    || instance.connection.hasSent() || instance.connection.hasAnswered() || instance.connection.hasPubSub()))) {
                step(false);
            }
            settle();
        }
        catch (IllegalStateException ex) {
            stuck.add(ex.getMessage());
        }
        return check(stuck);
    }

    private boolean busy() {
        synchronized (operations) {
            return clients.stream().anyMatch(client -> !client.idle()) || !operations.pending.isEmpty()
                    || world.lanes.stream().anyMatch(lane -> !lane.runner.idle());
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
                    settle();
                    return;
                }
            }
        }
    }

    private void step(boolean faultsAllowed) {
        settle();
        List<Choice> choices = new ArrayList<>();
        for (VirtualScheduler lane : world.lanes) {
            if (lane.due() != null) {
                choices.add(new Choice(10, "", lane::runHead)); // traced by the lane's thread as it takes it
            }
        }
        double faults = faultsAllowed ? faultWeight : 0;
        for (Client.Instance instance : instances) {
            SimConnection connection = instance.connection;
            if (world.now() - connection.pausedUntil < 0) {
                continue; // the connection is cut off for now: nothing goes through it
            }
            if (connection.hasSent()) {
                choices.add(new Choice(8, null, () -> connection.runNext(false)));
                if (connection.renewalAhead()) {
                    choices.add(new Choice(2, null, connection::runPastRenewal));
                }
                choices.add(new Choice(0.2 * faults, null, () -> connection.runNext(true)));
            }
            if (connection.hasAnswered()) {
                choices.add(new Choice(8, null, () -> connection.answerNext(false)));
                choices.add(new Choice(0.2 * faults, null, () -> connection.answerNext(true)));
            }
            if (connection.hasPubSub()) {
                choices.add(new Choice(6, null, connection::pubSubNext));
            }
        }
        if (faultsAllowed && operationsLeft > 0) {
            for (Client client : clients) {
                if (client.idle() && !client.instance.closing) {
                    choices.add(new Choice(operationWeight, null, () -> {
                        operationsLeft--;
                        if (random.nextInt(60) == 0 && instances.stream().filter(each -> !each.closing).count() > 1) {
                            operations.closeEngine(client);
                        }
                        else {
                            operations.start(client);
                        }
                    }));
                }
            }
        }
        if (faultsAllowed) {
            for (Client client : clients) {
                String doing = client.doing;
                if (!client.idle() && !client.interruptAimed() && (doing.contains(" tryLock ") || doing.contains(" re-enter "))) {
                    choices.add(new Choice(0.3, null, () -> {
                        world.trace("interrupt " + client.getName() + " (" + doing + ")");
                        client.interruptNow();
                    }));
                }
            }
            synchronized (operations) {
                for (Operations.Pending waiting : operations.pending) {
                    choices.add(new Choice(0.3, null, () -> {
                        world.trace("cancel " + waiting.instance().name + "'s tryLockAsync " + waiting.key());
                        waiting.future().cancel(false);
                    }));
                }
            }
            choices.add(new Choice(0.02 * faults, null, this::restart));
            choices.add(new Choice(0.05 * faults, null, this::cutOff));
            choices.add(new Choice(0.05 * faults, null, this::loseKey));
        }
        boolean anyDue = choices.stream().anyMatch(choice -> choice.what != null);
        long nextTimer = world.lanes.stream().mapToLong(VirtualScheduler::nextAt).min().orElse(Long.MAX_VALUE);
        if (anyDue && world.now() - nextTimer < TIMER_SLACK_NANOS) {
            // a scheduler's thread may be late (descheduled, a GC pause): up to TIMER_SLACK_NANOS after its due time
            long late = nextTimer + TIMER_SLACK_NANOS - world.now();
            choices.add(new Choice(0.1 * clockWeight, null, () -> {
                world.advanceBy(1 + (long) (random.nextDouble() * late));
                world.trace("clock moves while a scheduler is late");
            }));
        }
        if (!anyDue) {
            double weight = choices.stream().anyMatch(choice -> choice.weight > 0) ? clockWeight : 1;
            if (nextTimer != Long.MAX_VALUE) {
                choices.add(new Choice(weight, null, () -> {
                    world.advanceTo(nextTimer);
                    world.trace("clock to the next timer");
                }));
            }
            long room = nextTimer == Long.MAX_VALUE ? config.lease.toNanos() : nextTimer - world.now();
            choices.add(new Choice(weight, null, () -> {
                world.advanceBy(1 + (long) (random.nextDouble() * Math.min(room, 50_000_000L)));
                world.trace("clock moves");
            }));
        }
        double total = choices.stream().mapToDouble(Choice::weight).sum();
        double pick = random.nextDouble() * total;
        for (Choice choice : choices) {
            pick -= choice.weight;
            if (pick < 0 && choice.weight > 0) {
                if (choice.what != null && !choice.what.isEmpty()) {
                    world.trace(choice.what);
                }
                choice.action.run();
                break;
            }
        }
        world.advanceBy(1); // every step at its own instant: the history orders by time
        steps++;
    }

    private void restart() {
        world.trace("NEMESIS Redis restarts empty");
        long start = history.now();
        redis.flushAll();
        instances.forEach(instance -> instance.connection.restarted());
        history.fault("restart-empty", "redis", start, history.now());
    }

    /** One instance's connection carries nothing for a while (a network partition, a long GC pause of Redis). */
    private void cutOff() {
        Client.Instance instance = instances.get(random.nextInt(instances.size()));
        long nanos = (long) (random.nextDouble() * config.lease.toNanos() * 1.5);
        instance.connection.pausedUntil = world.now() + nanos;
        world.trace(String.format(java.util.Locale.ROOT, "NEMESIS %s's connection is cut off for %.1f ms", instance.name,
                nanos / 1e6));
        history.fault("cut-off", instance.name, history.now(), history.now() + nanos, config.redisTimeout.toNanos());
    }

    private void loseKey() {
        String key = keys.get(random.nextInt(keys.size()));
        world.trace("NEMESIS the lock of " + key + " is lost (as by a failover)");
        long start = history.now();
        redis.delete(LockKeys.of("lock:", key).lock());
        history.fault("delete-key", "redis " + key, start, history.now());
    }

    /** Waits until every client is blocked or idle (several looks in a row: a thread just woken may not have run yet). */
    static long settleNanos;

    private void settle() {
        long began = System.nanoTime();
        try {
            settleQuietly();
            if (DEBUG && System.nanoTime() - began > 20_000_000L) {
                System.out.println("SLOW settle " + (System.nanoTime() - began) / 1_000_000 + " ms at step " + steps + ": "
                        + world.trace.get(world.trace.size() - 1));
            }
        }
        finally {
            settleNanos += System.nanoTime() - began;
        }
    }

    private void settleQuietly() {
        long giveUp = System.nanoTime() + 20_000_000_000L;
        int quiet = 0;
        int needed = 3;
        while (quiet < needed) {
            boolean all = true;
            boolean polling = false;
            for (Client client : clients) {
                all &= client.quiet();
                polling |= client.polling();
            }
            for (VirtualScheduler lane : world.lanes) {
                all &= lane.runner.quiet();
                polling |= lane.runner.polling();
            }
            // a thread asleep on a timer of its own looks again within a millisecond: give it three
            needed = polling ? 60 : Wakeups.AVAILABLE ? 3 : 20;
            if (polling && DEBUG) {
                clients.stream().filter(Client::polling).forEach(client -> System.out.println("POLLING " + client.getName()
                        + " " + client.doing + " " + java.util.Arrays.toString(client.getStackTrace())));
            }
            quiet = all ? quiet + 1 : 0;
            if (quiet < needed) {
                Thread.yield();
                LockSupport.parkNanos(50_000);
            }
            if (System.nanoTime() - giveUp > 0) {
                StringBuilder running = new StringBuilder();
                clients.stream().filter(client -> !client.quiet()).forEach(client -> running.append(client.getName())
                    .append(" (").append(client.doing).append(") at ")
                    .append(java.util.Arrays.toString(client.getStackTrace())).append("; "));
                throw new IllegalStateException("L4 a caller's thread kept running for 20 s with the clock stopped: " + running);
            }
        }
    }

    private Result check(List<String> stuck) {
        List<String> leftovers = new ArrayList<>(stuck);
        // a key kept by a holdAtLeast (at most 1 s) is not a leftover; a lease (3 s, renewed at most 1 s ago) still is
        world.advanceBy(1_001_000_000L);
        for (Client.Instance instance : instances) {
            if (!instance.closed) {
                leftovers.add(instance.name + "'s close() did not return");
            }
            for (String key : keys) {
                LockKeys names = LockKeys.of("lock:", key);
                String value = redis.lockValue(names);
                if (value != null && instance.connection.tokens.stream().anyMatch(value::startsWith)) {
                    leftovers.add(instance.name + " still holds " + key + " in Redis after close() (" + value + ")");
                }
                boolean withdrawDropped;
                synchronized (instance.connection) {
                    withdrawDropped = instance.connection.withdrawDropped.contains(key);
                }
                // an entry whose withdraw a fault dropped stays until it expires (the engine cannot know it was lost),
                // and a release may grant the key to it meanwhile
                if (value != null && value.startsWith("queue-grant:" + instance.engine.instanceId()) && !withdrawDropped) {
                    leftovers.add(instance.name + " was granted " + key + " by the queue after close() (" + value + ")");
                }
                redis.queued(names).stream().filter(member -> member.startsWith(instance.engine.instanceId()))
                    .filter(member -> !withdrawDropped)
                    .forEach(member -> leftovers.add(instance.name + " still queues for " + key + " after close()"));
            }
            for (VirtualScheduler lane : instance.lanes) {
                if (!lane.isShutdown() || lane.pending() > 0) {
                    leftovers.add(instance.name + "'s " + lane.name + " still has " + lane.pending() + " tasks after close()");
                }
            }
        }
        Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().startsWith("leasehold-"))
            .forEach(thread -> leftovers.add("thread " + thread.getName() + " alive after close()"));
        synchronized (operations) {
            operations.pending.forEach(waiting -> history.deadline(new History.Deadline(waiting.instance().name,
                    waiting.key(), waiting.start(), waiting.deadline(), Long.MAX_VALUE)));
            operations.blockingWaits.forEach(history::deadline);
            for (int i = 0; i < operations.ended.size(); i++) {
                History.Section section = operations.ended.get(i);
                boolean told = section.toldLost() || wasLost(operations.endedHandles.get(i));
                history.section(new History.Section(section.id(), section.instance(), section.key(), false,
                        section.token(), section.reentry(), section.op(), section.callStart(), section.grantedAt(),
                        section.endAt(), section.holdNanos(), section.verdict(), section.heldBefore(), false, told));
            }
        }
        redis.issued.forEach(block -> history.issued(new History.Issued(block.key(), block.first(), block.last(),
                block.atNanos())));
        // a call may end one Redis timeout after its deadline (a reply it waits for), plus the coarse tick, plus late timers
        long lateBound = config.redisTimeout.toNanos() + 2 * CoarseTimeouts.TICK_MILLIS * 1_000_000L + 2 * TIMER_SLACK_NANOS
                + 1_000_000L;
        // a key may stand free inside a wait for up to a queue waiter's refresh (1 s) and a grant's claim; not more
        HistoryChecker.Findings findings = new HistoryChecker(2500).lateBound(lateBound)
            .check(history, leftovers);
        return new Result(seed, findings.violations(), world.trace, history.sections(), steps, world.elapsed() / 1_000_000);
    }

    private static boolean wasLost(LockHandle handle) {
        try {
            return handle.wasLost();
        }
        catch (RuntimeException ex) {
            return false;
        }
    }
}
