package dev.leasehold.benchmarks.cost;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * What one uncontended lock+unlock cycle costs, per contender: client CPU and allocation per cycle (this whole JVM),
 * Redis commands, their time and the servers' CPU per cycle, and cycles/s; at 1 and 16 threads, each thread on a
 * key of its own. CPU per cycle depends much less on the machine's load than throughput does, so it is the figure
 * to compare on a shared machine. Starts three {@code redis-server} processes of its own on free loopback ports
 * (the quorum uses all three, every other contender the first). Every contender runs once unmeasured first (JIT).
 * <p>
 * {@code ./mvnw -B -pl benchmarks -am verify -Pcost-benchmarks -DskipTests}, arguments through
 * {@code -Dbenchmarks.args="--trials=3 --seconds=4 --threads=1,16 --contenders=floor,leasehold"}.
 */
public final class CostPerCycleMain {

    public static void main(String[] given) throws Exception {
        String[] args = Arrays.stream(given).flatMap(arg -> Arrays.stream(arg.trim().split("\\s+"))).toArray(String[]::new);
        int trials = Integer.parseInt(arg(args, "--trials=", "3"));
        double seconds = Double.parseDouble(arg(args, "--seconds=", "4"));
        List<Integer> threadCounts = Arrays.stream(arg(args, "--threads=", "1,16").split(",")).map(Integer::valueOf).toList();
        List<String> ids = List.of(arg(args, "--contenders=", String.join(",", CostContenders.IDS)).split(","));
        Path results = Path.of(arg(args, "--results=", "RESULTS-cost.md"));
        List<TestRedisServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                servers.add(TestRedisServers.startOwn(List.of(), Map.of()));
            }
            Map<String, CostContenders.Entry> contenders = CostContenders.on(servers, ids);
            Map<String, List<CycleCost>> runs = new LinkedHashMap<>();
            for (var contender : contenders.entrySet()) {
                // long enough for the JIT to finish: its compiler threads' CPU would count as the client's
                measure(contender.getValue(), 1, 3.0);
                measure(contender.getValue(), 16, 3.0);
                System.out.printf("warmed up %s%n", contender.getKey());
            }
            for (int trial = 1; trial <= trials; trial++) {
                for (int threads : threadCounts) {
                    for (var contender : contenders.entrySet()) {
                        CycleCost cost = measure(contender.getValue(), threads, seconds);
                        runs.computeIfAbsent(CostReport.row(contender.getKey(), threads), k -> new ArrayList<>()).add(cost);
                        System.out.printf("trial %d, %2d threads, %-20s %,9.0f cycles/s  client %6.1f µs (java %5.1f) %,8.0f B %4.1f waits  "
                                + "redis %4.1f cmds %5.1f µs %s%n", trial, threads, contender.getKey(), cost.cyclesPerSecond(),
                                cost.clientCpuMicros(), cost.javaThreadsCpuMicros(), cost.allocatedBytes(), cost.threadWaits(), cost.redisCommands(), cost.redisCpuMicros(),
                                CostReport.commands(cost));
                    }
                }
            }
            String report = CostReport.markdown(contenders, threadCounts, runs, trials, seconds)
                    + "\nWhat the scripts' steps cost Redis without the network (" + "cycles pipelined 100 at a time on "
                    + "one connection, 20,000 per run, median of 3 runs; `ScriptCost`):\n\n" + ScriptCost.measure(servers.get(0));
            Files.writeString(results, report);
            System.out.println(report);
        }
        finally {
            servers.forEach(TestRedisServer::close);
        }
    }

    /** One run of {@code threads} threads on keys of their own for {@code seconds}, on a fresh client. */
    static CycleCost measure(CostContenders.Entry contender, int threads, double seconds) throws Exception {
        try (CostContenders.Cycle cycle = contender.start().get()) {
            String run = Long.toString(System.nanoTime(), 36);
            for (int t = 0; t < threads; t++) {
                // connections, subscriptions and script caches set up before the measured window
                cycle.run("cost:" + run + ":" + t);
            }
            AtomicLong cycles = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(threads);
            CountDownLatch measured = new CountDownLatch(1);
            long[] window = new long[1];
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String key = "cost:" + run + ":" + t;
                Thread worker = new Thread(() -> {
                    long mine = 0;
                    try {
                        ready.countDown();
                        go.await();
                        while (System.nanoTime() < window[0]) {
                            if (cycle.run(key)) {
                                mine++;
                            }
                        }
                    }
                    catch (Throwable ex) {
                        failure.compareAndSet(null, ex);
                    }
                    cycles.addAndGet(mine);
                    done.countDown();
                    // stays alive until its allocation is counted
                    awaitQuietly(measured);
                }, "cost-worker-" + t);
                worker.start();
                workers.add(worker);
            }
            ready.await();
            ServerCost serverBefore = ServerCost.read(contender.servers());
            long cpuBefore = processCpuNanos();
            long javaCpuBefore = javaThreadsCpuNanos();
            long allocatedBefore = allocatedBytes();
            long parksBefore = voluntarySwitches();
            long started = System.nanoTime();
            window[0] = started + (long) (seconds * 1e9);
            go.countDown();
            done.await();
            long elapsed = System.nanoTime() - started;
            long cpu = processCpuNanos() - cpuBefore;
            long javaCpu = javaThreadsCpuNanos() - javaCpuBefore;
            long allocated = allocatedBytes() - allocatedBefore;
            long parks = voluntarySwitches() - parksBefore;
            ServerCost server = ServerCost.read(contender.servers()).since(serverBefore);
            measured.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a cycle failed", failure.get());
            }
            return CycleCost.of(Math.max(1, cycles.get()), elapsed / 1e9, cpu, javaCpu, allocated, parks, server);
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /**
     * CPU time of the JVM's Java threads alive now (the caller's, the event loops', the timers'), without the JIT
     * compiler's and the GC's threads: the code's own cost, even while the compiler is still busy.
     */
    private static long javaThreadsCpuNanos() {
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long id : threads.getAllThreadIds()) {
            total += Math.max(0, threads.getThreadCpuTime(id));
        }
        return total;
    }

    /** Bytes allocated so far by the threads alive now (worker threads are kept alive until counted). */
    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            total += Math.max(0, bytes);
        }
        return total;
    }

    /**
     * Times this JVM's threads blocked (voluntary context switches, Linux {@code /proc}): every hand-over between
     * threads (a reply to the caller, a request to the event loop, a timer) is one; unlike CPU time, the count
     * does not grow with the machine's load. -1 where {@code /proc} is not there.
     */
    private static long voluntarySwitches() {
        java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
        if (tasks == null) {
            return -1;
        }
        long total = 0;
        for (java.io.File task : tasks) {
            try {
                for (String line : Files.readAllLines(task.toPath().resolve("status"))) {
                    if (line.startsWith("voluntary_ctxt_switches:")) {
                        total += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                    }
                }
            }
            catch (java.io.IOException | RuntimeException ex) {
                // the thread ended meanwhile
            }
        }
        return total;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static String arg(String[] args, String prefix, String fallback) {
        for (String arg : args) {
            if (arg.startsWith(prefix)) {
                return arg.substring(prefix.length());
            }
        }
        return fallback;
    }

    private CostPerCycleMain() {
    }
}
