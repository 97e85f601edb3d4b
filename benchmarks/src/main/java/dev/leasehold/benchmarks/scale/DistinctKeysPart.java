package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * Item 2 of the Scale part: {@code keys} distinct keys locked and released in turn (8 threads, each its own
 * share of the keys), then what is left in Redis: keys per locked key right after the last release, keys
 * without a TTL (must be none: nothing may stay forever), and how long until the key count and memory are back
 * at their baseline (polled every second, for at most {@link #MAX_WAIT}).
 */
final class DistinctKeysPart {

    static final String[] METRICS = { "cycles/s", "keys left / key", "keys without TTL", "bytes left / key",
            "s until keys at baseline", "bytes above baseline then", "errors" };

    private static final int THREADS = 8;

    private static final Duration MAX_WAIT = Duration.ofSeconds(120);

    private DistinctKeysPart() {
    }

    static double[] measure(String contenderId, TestRedisServer redis, int keys, Duration lease) throws Exception {
        redis.command("FLUSHALL");
        try (ScaleContender contender = ScaleContender.create(contenderId, new Redis(redis.host(), redis.port()), lease)) {
            contender.release(contender.hold("scale-warm-up"));
            waitForKeys(redis, 0, MAX_WAIT);
            long memoryBefore = ServerStats.usedMemory(redis);
            long keysBefore = ServerStats.keys(redis);
            String run = "distinct-" + Long.toString(System.nanoTime(), 36) + "-";
            AtomicLong errors = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            long started = System.nanoTime();
            for (int t = 0; t < THREADS; t++) {
                int from = t * keys / THREADS;
                int to = (t + 1) * keys / THREADS;
                Thread thread = new Thread(() -> {
                    for (int i = from; i < to; i++) {
                        try {
                            contender.release(contender.hold(run + i));
                        }
                        catch (Exception ex) {
                            errors.incrementAndGet();
                        }
                    }
                }, "scale-distinct-" + t);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join(TimeUnit.MINUTES.toMillis(30));
            }
            double cyclesPerSecond = keys / ((System.nanoTime() - started) / 1e9);
            long lastRelease = System.nanoTime();
            long keysLeft = ServerStats.keys(redis) - keysBefore;
            long withoutTtl = ServerStats.keysWithoutTtl(redis);
            long bytesLeft = ServerStats.usedMemory(redis) - memoryBefore;
            boolean back = waitForKeys(redis, keysBefore, MAX_WAIT);
            double secondsUntilBack = back ? (System.nanoTime() - lastRelease) / 1e9 : Double.NaN;
            long bytesAbove = ServerStats.usedMemory(redis) - memoryBefore;
            return new double[] { cyclesPerSecond, (double) keysLeft / keys, withoutTtl, (double) bytesLeft / keys,
                    secondsUntilBack, bytesAbove, errors.get() };
        }
    }

    /** Waits until the server holds {@code keys} keys (expired ones gone); false when it did not within {@code max}. */
    private static boolean waitForKeys(TestRedisServer redis, long keys, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (ServerStats.keys(redis) > keys) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1000);
        }
        return true;
    }
}
