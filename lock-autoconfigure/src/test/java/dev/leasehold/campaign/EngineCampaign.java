package dev.leasehold.campaign;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import dev.leasehold.campaign.CampaignServers.Config;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.EngineDiagnostics;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * One engine-level run: three instances (engines on their own connections) on three keys of real Redis,
 * three application threads each drawing operations from the seed, the nemesis drawing faults from it, and
 * at the end the leftover checks (L2) and the history checker.
 */
public final class EngineCampaign {

    static final List<String> KEYS = List.of("k0", "k1", "k2");

    /** Enough threads per instance that local hand-offs, and give-ups racing them, are common. */
    static final int THREADS_PER_INSTANCE = 3;

    static final LockEngineSettings SETTINGS = new LockEngineSettings("lock:", Duration.ofMillis(1500),
            Duration.ofMillis(300), Duration.ofMillis(200));

    /** Lingers a release may wait for a thread of its turn: off, the default, and long enough for faults to land in. */
    private static final List<Duration> LINGERS = List.of(Duration.ZERO, Duration.ofNanos(100_000), Duration.ofMillis(5),
            Duration.ofMillis(20));

    /** The settings of instance {@code i}: its linger chosen by the seed (so a failing seed replays it). */
    static LockEngineSettings withLinger(long seed, int i) {
        Duration linger = LINGERS.get(new java.util.SplittableRandom(seed * 31 + i).nextInt(LINGERS.size()));
        return SETTINGS.withHandOff(new LockEngineSettings.HandOff(SETTINGS.handOff().maxTurn(),
                SETTINGS.handOff().turnCheck(), linger));
    }

    /** What one run did and what the checker found. */
    public record Run(String level, String config, long seed, long seconds, History history, HistoryChecker.Findings findings) {
    }

    static Run run(Config config, long seed, long seconds) {
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        History history = new History();
        FencedStore store = new FencedStore();
        List<String> leftovers = new ArrayList<>();
        ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
        ExecutorService others = Executors.newFixedThreadPool(2);
        try (CampaignServers servers = new CampaignServers(config)) {
            List<CampaignInstance> instances = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                CampaignInstance instance = new CampaignInstance("i" + i, servers, withLinger(seed, i), history);
                // a running application: connected, scripts loaded, subscribed once (a loaded machine may need tries)
                if (!await(Duration.ofSeconds(60), () -> warmedUp(instance))) {
                    throw new IllegalStateException(instance.name + " could not lock once in a minute: Redis unreachable");
                }
                instances.add(instance);
            }
            System.out.println("campaign " + config + " seed " + seed + ": hand-off lingers of i1..i3 "
                    + java.util.stream.IntStream.rangeClosed(1, 3).mapToObj(i -> withLinger(seed, i).handOff().linger()).toList());
            history.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 3 * THREADS_PER_INSTANCE; w++) {
                CampaignWorker worker = new CampaignWorker(instances.get(w % 3), KEYS, seed * 1000 + w, history, store,
                        scheduler, others, deadline);
                threads.add(new Thread(worker, "campaign-worker-" + w));
            }
            threads.add(new Thread(new Nemesis(servers, instances, KEYS, SETTINGS.keyPrefix(), history, seed * 1000 + 999,
                    deadline), "campaign-nemesis"));
            threads.forEach(Thread::start);
            for (Thread thread : threads) {
                join(thread, deadline, leftovers);
            }
            for (CampaignInstance instance : instances) {
                DefaultLockEngine engine = instance.engine();
                if (!await(Duration.ofSeconds(5), () -> engine.heldLockCount() == 0 && engine.waitingCount() == 0
                        && EngineDiagnostics.localGates(engine) == 0)) {
                    leftovers.add(instance.name + " at rest still has " + engine.heldLockCount() + " held, "
                            + engine.waitingCount() + " waiting, " + EngineDiagnostics.localGates(engine) + " local gates");
                }
            }
            instances.forEach(CampaignInstance::close);
            redisLeftovers(servers, leftovers);
        }
        finally {
            scheduler.shutdownNow();
            others.shutdownNow();
        }
        threadLeftovers(threadsBefore, leftovers);
        // the build's short campaign allows 3.5 s: above a stall the campaign found that the fair queue's claim
        // timeout (3 s) still bounds (docs/failure-modes.md, open); -Pcampaign judges with 1 s and reports it
        HistoryChecker checker = new HistoryChecker(Long.getLong("leasehold.campaign.free-bound-ms", 250));
        return new Run("engine", config.name(), seed, seconds, history, checker.check(history, leftovers));
    }

    private static boolean warmedUp(CampaignInstance instance) {
        try {
            instance.engine().lock("warm-up", Duration.ofSeconds(10)).close();
            return true;
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    private static void join(Thread thread, long deadline, List<String> leftovers) {
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 60_000));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            leftovers.add(thread.getName() + " still running a minute after the end: " + stack(thread));
            thread.interrupt();
        }
    }

    private static void redisLeftovers(CampaignServers servers, List<String> leftovers) {
        for (TestRedisServer redis : servers.servers) {
            if (!await(Duration.ofSeconds(10), () -> keysWithoutTtl(servers, redis).isEmpty())) {
                leftovers.add("keys without a TTL on " + redis.url() + ": " + keysWithoutTtl(servers, redis));
            }
            if (!await(Duration.ofSeconds(10), () -> queued(redis) == 0)) {
                leftovers.add(queued(redis) + " fair-queue entries on " + redis.url());
            }
            if (!await(Duration.ofSeconds(5), () -> channels(redis).isEmpty())) {
                leftovers.add("subscribed channels on " + redis.url() + ": " + channels(redis));
            }
        }
    }

    private static List<String> keysWithoutTtl(CampaignServers servers, TestRedisServer redis) {
        return keys(redis).stream()
            .filter(key -> !(servers.countersNeverExpire() && key.endsWith(":fence")))
            .filter(key -> redis.command("TTL", key).equals("-1"))
            .toList();
    }

    private static long queued(TestRedisServer redis) {
        return keys(redis).stream()
            .filter(key -> key.endsWith(":queue"))
            .mapToLong(key -> Long.parseLong(redis.command("ZCARD", key)))
            .sum();
    }

    private static List<String> keys(TestRedisServer redis) {
        return list(redis.command("KEYS", "*"));
    }

    private static List<String> channels(TestRedisServer redis) {
        return list(redis.command("PUBSUB", "CHANNELS"));
    }

    private static List<String> list(String reply) {
        String inner = reply.replaceAll("^\\[|\\]$", "").trim();
        return inner.isEmpty() || inner.equals("null") ? List.of() : List.of(inner.split(",\\s*"));
    }

    private static void threadLeftovers(Set<Thread> before, List<String> leftovers) {
        BooleanSupplier none = () -> starterThreads(before).isEmpty();
        if (!await(Duration.ofSeconds(2), none)) {
            leftovers.add("starter threads alive after every engine closed: " + starterThreads(before));
        }
    }

    private static List<String> starterThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && !before.contains(thread) && thread.getName().startsWith("leasehold-"))
            .map(Thread::getName)
            .collect(Collectors.toList());
    }

    static boolean await(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return true;
    }

    private static String stack(Thread thread) {
        StringBuilder text = new StringBuilder();
        for (StackTraceElement frame : thread.getStackTrace()) {
            text.append("\n    at ").append(frame);
        }
        return text.toString();
    }
}
