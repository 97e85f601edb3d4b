package dev.leasehold.benchmarks.quorum;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * Quorum mode against single-server Leasehold and Redisson's RedissonRedLock over the same local nodes:
 * uncontended cycles/s at 1 and 16 threads (distinct keys), and contended acquire latency p50/p99 (two
 * clients of 4 threads each on one key, 1 ms critical section). Starts its own five redis-server
 * processes on free loopback ports. Figures are medians of the trials; ratios are taken within each
 * trial, then their median.
 * <p>
 * {@code ./mvnw -B -pl benchmarks -am verify -Pquorum-benchmarks -DskipTests}
 */
public final class QuorumBenchmarkMain {

    private static final String[] METRICS = { "1 thread cycles/s", "16 threads cycles/s", "contended p50 ms",
            "contended p99 ms" };

    public static void main(String[] given) throws Exception {
        // -Dbenchmarks.args="..." arrives as one argument
        String[] args = Arrays.stream(given).flatMap(arg -> Arrays.stream(arg.trim().split("\\s+"))).toArray(String[]::new);
        int trials = intArg(args, "--trials=", 3);
        double seconds = Double.parseDouble(stringArg(args, "--seconds=", "3"));
        String results = stringArg(args, "--results=", "QUORUM-RESULTS.md");
        List<TestRedisServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                servers.add(TestRedisServers.startOwn(List.of(), Map.of()));
            }
            List<String> urls = servers.stream().map(TestRedisServer::url).toList();
            Map<String, Function<Integer, QuorumContender>> contenders = new LinkedHashMap<>();
            contenders.put("Leasehold, 1 server", n -> QuorumContender.leasehold(urls.subList(0, 1)));
            contenders.put("Leasehold quorum of 3", n -> QuorumContender.leasehold(urls.subList(0, 3)));
            contenders.put("Leasehold quorum of 5", n -> QuorumContender.leasehold(urls.subList(0, 5)));
            contenders.put("RedissonRedLock over 3", n -> QuorumContender.redissonRedLock(urls.subList(0, 3)));
            contenders.put("RedissonRedLock over 5", n -> QuorumContender.redissonRedLock(urls.subList(0, 5)));
            Map<String, double[][]> figures = new LinkedHashMap<>();
            contenders.keySet().forEach(name -> figures.put(name, new double[METRICS.length][trials]));
            AtomicInteger violations = new AtomicInteger();
            // one unmeasured round of everything first, so no contender is measured while the JIT is still cold
            for (var entry : contenders.entrySet()) {
                measure(entry.getValue(), 1.0, true, violations);
                System.out.printf("warmed up %s%n", entry.getKey());
            }
            for (int trial = 0; trial < trials; trial++) {
                for (var entry : contenders.entrySet()) {
                    double[] row = measure(entry.getValue(), seconds, false, violations);
                    for (int m = 0; m < METRICS.length; m++) {
                        figures.get(entry.getKey())[m][trial] = row[m];
                    }
                    System.out.printf("trial %d %-24s %s%n", trial + 1, entry.getKey(), Arrays.toString(row));
                }
            }
            String report = report(figures, trials, seconds, violations.get());
            Files.writeString(Path.of(results), report);
            System.out.println(report);
            if (violations.get() > 0) {
                System.exit(1);
            }
        }
        finally {
            servers.forEach(TestRedisServer::close);
        }
    }

    private static double[] measure(Function<Integer, QuorumContender> factory, double seconds, boolean warmUp,
            AtomicInteger violations) throws Exception {
        try (QuorumContender first = factory.apply(0); QuorumContender second = factory.apply(1)) {
            if (warmUp) {
                uncontended(first, 4, 2.0);
                contended(first, second, 1.0, violations);
            }
            double one = uncontended(first, 1, seconds);
            double sixteen = uncontended(first, 16, seconds);
            double[] contended = contended(first, second, seconds, violations);
            return new double[] { one, sixteen, contended[0], contended[1] };
        }
    }

    /** Cycles per second of {@code threads} threads, each on a key of its own. */
    private static double uncontended(QuorumContender contender, int threads, double seconds) throws Exception {
        AtomicLong cycles = new AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        String run = Long.toString(System.nanoTime(), 36);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String key = "bench:" + run + ":" + t;
            workers.add(started(() -> {
                try {
                    while (System.nanoTime() < end) {
                        if (contender.cycle(key, Duration.ofSeconds(5), () -> {
                        })) {
                            cycles.incrementAndGet();
                        }
                    }
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }));
        }
        long started = System.nanoTime();
        for (Thread worker : workers) {
            worker.join();
        }
        return cycles.get() / ((System.nanoTime() - started) / 1e9);
    }

    /** Acquire latency p50 and p99 (ms) of 2 clients × 4 threads on one key with a 1 ms critical section. */
    private static double[] contended(QuorumContender first, QuorumContender second, double seconds,
            AtomicInteger violations) throws Exception {
        String key = "contended:" + Long.toString(System.nanoTime(), 36);
        AtomicInteger inside = new AtomicInteger();
        List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        long end = System.nanoTime() + (long) (seconds * 1e9);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            QuorumContender client = t % 2 == 0 ? first : second;
            workers.add(started(() -> {
                try {
                    start.await();
                    while (System.nanoTime() < end) {
                        long asked = System.nanoTime();
                        long[] acquiredAt = new long[1];
                        client.cycle(key, Duration.ofSeconds(10), () -> {
                            acquiredAt[0] = System.nanoTime();
                            if (inside.incrementAndGet() > 1) {
                                violations.incrementAndGet();
                            }
                            long busy = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
                            while (System.nanoTime() < busy) {
                                Thread.onSpinWait();
                            }
                            inside.decrementAndGet();
                        });
                        if (acquiredAt[0] != 0) {
                            latencies.add(acquiredAt[0] - asked);
                        }
                    }
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }));
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        if (sorted.length == 0) {
            return new double[] { Double.NaN, Double.NaN };
        }
        return new double[] { sorted[(int) (sorted.length * 0.50)] / 1e6,
                sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))] / 1e6 };
    }

    private static String report(Map<String, double[][]> figures, int trials, double seconds, int violations) {
        StringBuilder out = new StringBuilder();
        out.append("# Quorum mode benchmark\n\n")
            .append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
            .append(" cores, Java ").append(Runtime.version()).append("; five local `redis-server` processes on ")
            .append("loopback (the same machine, so network latency is near zero and the nodes share the cores).\n")
            .append("Medians of ").append(trials).append(" trials of ").append(seconds).append(" s per figure. ")
            .append("Uncontended: each thread on its own key. Contended: two clients × 4 threads on one key, ")
            .append("1 ms critical section; latency from asking to holding. One unmeasured round of every ")
            .append("contender first (JIT warm-up).\n")
            .append("Mutual exclusion violations: ").append(violations).append(".\n\n");
        out.append("| contender |");
        for (String metric : METRICS) {
            out.append(' ').append(metric).append(" |");
        }
        out.append("\n|---|");
        out.append("---:|".repeat(METRICS.length)).append('\n');
        figures.forEach((name, values) -> {
            out.append("| ").append(name).append(" |");
            for (double[] metric : values) {
                out.append(' ').append(format(median(metric))).append(" |");
            }
            out.append('\n');
        });
        out.append("\nRatios within each trial (median over trials):\n\n");
        double[][] single = figures.get("Leasehold, 1 server");
        ratio(out, "quorum of 3 / 1 server, 1 thread cycles/s", figures.get("Leasehold quorum of 3")[0], single[0]);
        ratio(out, "quorum of 3 / 1 server, 16 threads cycles/s", figures.get("Leasehold quorum of 3")[1], single[1]);
        ratio(out, "quorum of 5 / 1 server, 1 thread cycles/s", figures.get("Leasehold quorum of 5")[0], single[0]);
        for (int n : new int[] { 3, 5 }) {
            double[][] ours = figures.get("Leasehold quorum of " + n);
            double[][] redlock = figures.get("RedissonRedLock over " + n);
            ratio(out, "quorum of " + n + " / RedissonRedLock over " + n + ", 1 thread cycles/s", ours[0], redlock[0]);
            ratio(out, "quorum of " + n + " / RedissonRedLock over " + n + ", 16 threads cycles/s", ours[1], redlock[1]);
            ratio(out, "RedissonRedLock over " + n + " / quorum of " + n + ", contended p99", redlock[3], ours[3]);
        }
        out.append("\nTargets (issue 13): quorum of 3 at 1 thread ≥ 0.7 × one server; ahead of RedissonRedLock at every N and thread count.\n");
        return out.toString();
    }

    private static void ratio(StringBuilder out, String what, double[] numerator, double[] denominator) {
        double[] ratios = new double[numerator.length];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = numerator[i] / denominator[i];
        }
        out.append("- ").append(what).append(": ").append(String.format("%.2f", median(ratios))).append('\n');
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String format(double value) {
        return value >= 100 ? String.format("%,.0f", value) : String.format("%.2f", value);
    }

    private static int intArg(String[] args, String prefix, int fallback) {
        return Integer.parseInt(stringArg(args, prefix, Integer.toString(fallback)));
    }

    private static String stringArg(String[] args, String prefix, String fallback) {
        for (String arg : args) {
            if (arg.startsWith(prefix)) {
                return arg.substring(prefix.length());
            }
        }
        return fallback;
    }

    private static Thread started(Runnable body) {
        Thread thread = new Thread(body);
        thread.start();
        return thread;
    }

    private QuorumBenchmarkMain() {
    }
}
