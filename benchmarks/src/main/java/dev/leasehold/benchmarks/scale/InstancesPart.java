package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * Item 4 of the Scale part: {@code instances} independent clients (own connections, own engine: pods) with
 * two threads each on one key, 1 ms critical section. Measures throughput, the p99 wait over all, each
 * instance's share of the acquisitions against the fair share, and how far apart the instances' p99 waits
 * are. Every holder is in this JVM, so mutual exclusion is checked in the JVM.
 */
final class InstancesPart {

    static final String[] METRICS = { "acquisitions/s", "p99 wait ms", "smallest share / fair", "per-instance p99 max/min",
            "violations + errors" };

    static final int THREADS_PER_INSTANCE = 2;

    private static final Duration WAIT = Duration.ofSeconds(30);

    private InstancesPart() {
    }

    static double[] measure(String contenderId, TestRedisServer redis, int instances, Duration lease, double seconds)
            throws Exception {
        Redis address = new Redis(redis.host(), redis.port());
        List<ScaleContender> clients = new ArrayList<>();
        try {
            for (int i = 0; i < instances; i++) {
                clients.add(ScaleContender.create(contenderId, address, lease));
            }
            String key = "instances-" + Long.toString(System.nanoTime(), 36);
            AtomicInteger inside = new AtomicInteger();
            AtomicLong problems = new AtomicLong();
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
            long end = start + (long) (seconds * 1e9);
            long[][] waits = new long[instances * THREADS_PER_INSTANCE][];
            int[] counts = new int[waits.length];
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < waits.length; i++) {
                int slot = i;
                ScaleContender client = clients.get(i / THREADS_PER_INSTANCE);
                Thread thread = new Thread(() -> {
                    long[] own = new long[4096];
                    int count = 0;
                    LockSupport.parkNanos(start - System.nanoTime());
                    while (System.nanoTime() < end) {
                        long asked = System.nanoTime();
                        try {
                            Object handle = client.tryHold(key, WAIT);
                            if (handle == null) {
                                problems.incrementAndGet();
                                continue;
                            }
                            long granted = System.nanoTime();
                            if (inside.incrementAndGet() != 1) {
                                problems.incrementAndGet();
                            }
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                            inside.decrementAndGet();
                            client.release(handle);
                            if (granted < end) {
                                if (count == own.length) {
                                    own = Arrays.copyOf(own, count * 2);
                                }
                                own[count++] = granted - asked;
                            }
                        }
                        catch (Exception ex) {
                            problems.incrementAndGet();
                        }
                    }
                    waits[slot] = own;
                    counts[slot] = count;
                }, "scale-instance-" + i);
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
            for (Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis((long) seconds + 60));
            }
            return figures(instances, waits, counts, seconds, problems.get());
        }
        finally {
            clients.forEach(ScaleContender::close);
        }
    }

    private static double[] figures(int instances, long[][] waits, int[] counts, double seconds, long problems) {
        long total = Arrays.stream(counts).sum();
        long[] all = new long[(int) total];
        int offset = 0;
        double smallestShare = Double.MAX_VALUE;
        double lowestP99 = Double.MAX_VALUE;
        double highestP99 = 0;
        for (int instance = 0; instance < instances; instance++) {
            long[] own = new long[0];
            for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                int slot = instance * THREADS_PER_INSTANCE + t;
                if (waits[slot] == null) {
                    continue;
                }
                long[] thread = Arrays.copyOf(waits[slot], counts[slot]);
                System.arraycopy(thread, 0, all, offset, thread.length);
                offset += thread.length;
                long[] joined = Arrays.copyOf(own, own.length + thread.length);
                System.arraycopy(thread, 0, joined, own.length, thread.length);
                own = joined;
            }
            smallestShare = Math.min(smallestShare, total == 0 ? 0 : (double) own.length / total);
            double p99 = quantileMillis(own, 0.99);
            lowestP99 = Math.min(lowestP99, p99);
            highestP99 = Math.max(highestP99, p99);
        }
        return new double[] { total / seconds, quantileMillis(Arrays.copyOf(all, offset), 0.99),
                smallestShare * instances, highestP99 / lowestP99, problems };
    }

    static double quantileMillis(long[] nanos, double q) {
        if (nanos.length == 0) {
            return Double.NaN;
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int index = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
        return sorted[index] / 1e6;
    }
}
