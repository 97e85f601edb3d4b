package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.LockHandle;
import dev.leasehold.benchmarks.server.ServerCounters;

/**
 * Item 5 of the Scale part: Leasehold on a local Redis Cluster of its own ({@code masters} masters, no replicas).
 * Three phases on one cluster, counters read from every master before and after each:
 * <ol>
 * <li>uncontended throughput: 8 threads lock and release in turn over 10,000 keys; commands ({@code INFO
 * commandstats}) and Redis CPU ({@code INFO cpu}) per acquisition on each master, divided by the acquisitions
 * whose key that master owns;</li>
 * <li>renewals: locks held for several ticks; script calls per master per tick;</li>
 * <li>wake-ups: 2 clients x 2 threads on each of a few keys; cluster-wide PUBLISH (a broadcast to every node)
 * against sharded SPUBLISH (the owner only).</li>
 * </ol>
 * A command sent to a master that does not own its key is answered MOVED or ASK; their count ({@code INFO
 * errorstats}) over the three phases is the cross-node traffic, and must be 0.
 */
final class ClusterPart {

    static final String[] METRICS = { "acquisitions/s", "commands / acq", "Redis CPU µs / acq",
            "busiest master / mean (commands)", "per-master commands / acq min", "max", "idle CPU ms/s / master",
            "per-master CPU µs / acq above idle min", "max", "renewal calls / master / tick", "held locks / master",
            "PUBLISH (broadcast)", "SPUBLISH / grant", "MOVED + ASK", "errors + lost" };

    /** Short, so renewals run often within a short phase (a tick is a third of it). */
    static final Duration LEASE = Duration.ofMillis(1500);

    static final int THREADS = 8;

    static final int KEYS = 10_000;

    private ClusterPart() {
    }

    /** {@code engine} and {@code second} are two clients on the cluster (the first does phases 1 and 2). */
    static double[] measure(ClusterNodes nodes, ClusterEngine engine, ClusterEngine second, double seconds,
            int heldLocks) throws Exception {
        int masters = nodes.masters().size();
        AtomicLong errors = new AtomicLong();
        long lostBefore = engine.lost() + second.lost();
        warmUp(seconds < 1 ? 20 : 200, engine, second);
        long redirectsBefore = nodes.redirects();
        // 1. uncontended throughput over many keys
        int[] owners = nodes.slotOwners();
        String run = "c" + Long.toString(System.nanoTime(), 36) + "-";
        long[] acquisitionsPerMaster = new long[masters];
        // what a master spends with no client (cron, cluster bus): subtracted from the per-master cost
        List<ServerCounters> idleBefore = nodes.counters();
        long idleStarted = System.nanoTime();
        Thread.sleep((long) Math.min(1000, seconds * 400));
        List<ServerCounters> before = nodes.counters();
        double idleSeconds = (System.nanoTime() - idleStarted) / 1e9;
        double[] idleCpuPerSecond = new double[masters];
        for (int m = 0; m < masters; m++) {
            idleCpuPerSecond[m] = before.get(m).cpuSecondsSince(idleBefore.get(m)) / idleSeconds;
        }
        long started = System.nanoTime();
        long deadline = started + (long) (seconds * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            threads.add(ClusterPart.daemon(() -> {
                long[] mine = new long[masters];
                for (int i = thread; System.nanoTime() < deadline; i = (i + THREADS) % KEYS) {
                    String key = run + i;
                    try {
                        engine.hold(key).close();
                        mine[owners[ClusterNodes.slotOf(key)]]++;
                    }
                    catch (RuntimeException ex) {
                        errors.incrementAndGet();
                    }
                }
                synchronized (acquisitionsPerMaster) {
                    for (int m = 0; m < masters; m++) {
                        acquisitionsPerMaster[m] += mine[m];
                    }
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        double elapsed = (System.nanoTime() - started) / 1e9;
        List<ServerCounters> after = nodes.counters();
        long acquisitions = 0;
        long commands = 0;
        double cpu = 0;
        double[] commandsPerAcq = new double[masters];
        double[] cpuPerAcq = new double[masters];
        long[] commandsPerMaster = new long[masters];
        for (int m = 0; m < masters; m++) {
            acquisitions += acquisitionsPerMaster[m];
            commandsPerMaster[m] = ServerStats.allCalls(after.get(m).callsSince(before.get(m)));
            commands += commandsPerMaster[m];
            double masterCpu = after.get(m).cpuSecondsSince(before.get(m));
            cpu += masterCpu;
            commandsPerAcq[m] = (double) commandsPerMaster[m] / acquisitionsPerMaster[m];
            cpuPerAcq[m] = (masterCpu - idleCpuPerSecond[m] * elapsed) * 1e6 / acquisitionsPerMaster[m];
        }
        double busiest = (double) java.util.Arrays.stream(commandsPerMaster).max().orElse(0) / ((double) commands / masters);

        // 2. renewals of held locks, per master and tick
        List<String> heldKeys = new ArrayList<>();
        for (int i = 0; i < heldLocks; i++) {
            heldKeys.add(run + "held-" + i);
        }
        List<LockHandle> held = new ArrayList<>();
        for (String key : heldKeys) {
            held.add(engine.hold(key));
        }
        List<ServerCounters> holdBefore = nodes.counters();
        // 6 ticks; fewer for a short run (the smoke test)
        int ticks = (int) Math.max(2, Math.min(6, seconds * 2));
        Thread.sleep(ticks * LEASE.toMillis() / 3);
        List<ServerCounters> holdAfter = nodes.counters();
        double renewalsPerMasterTick = 0;
        for (int m = 0; m < masters; m++) {
            long scripts = ServerStats.scriptCalls(holdAfter.get(m).callsSince(holdBefore.get(m)));
            renewalsPerMasterTick = Math.max(renewalsPerMasterTick, (double) scripts / ticks);
        }
        for (LockHandle handle : held) {
            if (!handle.isHeld()) {
                errors.incrementAndGet();
            }
            handle.close();
        }

        // 3. wake-ups: contended keys, two clients
        List<ServerCounters> wakeBefore = nodes.counters();
        AtomicLong grants = new AtomicLong();
        long wakeDeadline = System.nanoTime() + (long) (Math.min(seconds, 2) * 1e9);
        threads.clear();
        for (int k = 0; k < 10; k++) {
            String key = run + "contended-" + k;
            for (ClusterEngine client : List.of(engine, second)) {
                for (int t = 0; t < 2; t++) {
                    threads.add(ClusterPart.daemon(() -> {
                        while (System.nanoTime() < wakeDeadline) {
                            try (LockHandle handle = client.hold(key)) {
                                grants.incrementAndGet();
                                Thread.sleep(1);
                            }
                            catch (InterruptedException ex) {
                                return;
                            }
                            catch (RuntimeException ex) {
                                errors.incrementAndGet();
                            }
                        }
                    }));
                }
            }
        }
        for (Thread thread : threads) {
            thread.join();
        }
        Map<String, Long> wakeCalls = Map.of();
        for (int m = 0; m < masters; m++) {
            wakeCalls = ClusterNodes.sum(wakeCalls, nodes.counters().get(m).callsSince(wakeBefore.get(m)));
        }
        long redirects = nodes.redirects() - redirectsBefore;
        long lost = engine.lost() + second.lost() - lostBefore;
        return new double[] { acquisitions / elapsed, (double) commands / acquisitions, cpu * 1e6 / acquisitions,
                busiest, min(commandsPerAcq), max(commandsPerAcq),
                java.util.Arrays.stream(idleCpuPerSecond).average().orElse(0) * 1e3, min(cpuPerAcq), max(cpuPerAcq),
                renewalsPerMasterTick, (double) heldLocks / masters, wakeCalls.getOrDefault("publish", 0L),
                (double) wakeCalls.getOrDefault("spublish", 0L) / grants.get(), redirects, errors.get() + lost };
    }

    /** Connections to every master and scripts loaded on each before anything is timed. */
    static void warmUp(int keys, ClusterEngine... engines) {
        for (ClusterEngine engine : engines) {
            for (int i = 0; i < keys; i++) {
                engine.hold("warm-up-" + i).close();
            }
        }
    }

    static double min(double[] values) {
        return java.util.Arrays.stream(values).min().orElse(Double.NaN);
    }

    static double max(double[] values) {
        return java.util.Arrays.stream(values).max().orElse(Double.NaN);
    }

    /** A started daemon thread (Java 17: no Thread.ofPlatform). */
    static Thread daemon(Runnable work) {
        Thread thread = new Thread(work, "scale-cluster");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
