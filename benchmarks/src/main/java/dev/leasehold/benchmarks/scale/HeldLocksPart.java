package dev.leasehold.benchmarks.scale;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.benchmarks.server.ServerCounters;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * Item 1 of the Scale part: {@code locks} watchdog-leased locks held at once by one client, over three lease
 * periods. Measures what holding costs: Redis memory and client heap per held lock, the renewal traffic per
 * tick (a third of the lease, the watchdogs' period), the client's CPU while holding, and the leases lost
 * (lock keys gone at the end, and what the library itself reported).
 */
final class HeldLocksPart {

    static final String[] METRICS = { "Redis bytes / lock", "Redis keys / lock", "client heap bytes / lock",
            "script calls / tick", "Redis commands / tick", "client CPU ms / tick", "locks lost",
            "acquire s (all locks)" };

    private static final int HOLDER_THREADS = 8;

    private HeldLocksPart() {
    }

    static double[] measure(String contenderId, TestRedisServer redis, int locks, Duration lease, int leasePeriods)
            throws Exception {
        redis.command("FLUSHALL");
        long ticksPerWindow = 3L * leasePeriods;
        try (ScaleContender contender = ScaleContender.create(contenderId, new Redis(redis.host(), redis.port()), lease)) {
            // the client's fixed cost (connections, threads, scripts) is not a held lock's
            contender.release(contender.hold("scale-warm-up"));
            long heapBefore = usedHeapAfterGc();
            long memoryBefore = ServerStats.usedMemory(redis);
            long keysBefore = ServerStats.keys(redis);
            String run = Long.toString(System.nanoTime(), 36);
            List<String> keys = new ArrayList<>(locks);
            for (int i = 0; i < locks; i++) {
                keys.add("held-" + run + "-" + i);
            }
            CountDownLatch allHeld = new CountDownLatch(HOLDER_THREADS);
            CountDownLatch releaseNow = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> holders = new ArrayList<>();
            long acquireStarted = System.nanoTime();
            for (int t = 0; t < HOLDER_THREADS; t++) {
                List<String> slice = keys.subList(t * locks / HOLDER_THREADS, (t + 1) * locks / HOLDER_THREADS);
                Thread holder = new Thread(() -> holdThenRelease(contender, slice, allHeld, releaseNow, failure),
                        "scale-holder-" + t);
                holder.setDaemon(true);
                holders.add(holder);
                holder.start();
            }
            if (!allHeld.await(10, TimeUnit.MINUTES) || failure.get() != null) {
                throw new IllegalStateException(contenderId + " could not take " + locks + " locks", failure.get());
            }
            double acquireSeconds = (System.nanoTime() - acquireStarted) / 1e9;
            long memoryAfter = ServerStats.usedMemory(redis);
            long keysAfter = ServerStats.keys(redis);
            // hold for the lease periods: renewals only
            ServerCounters before = ServerCounters.read(redis);
            long cpuBefore = processCpuNanos();
            Thread.sleep(leasePeriods * lease.toMillis());
            long cpuNanos = processCpuNanos() - cpuBefore;
            Map<String, Long> calls = ServerCounters.read(redis).callsSince(before);
            long stillHeld = ServerStats.existing(redis,
                    keys.stream().map(contender::redisKey).toList());
            long lost = Math.max(locks - stillHeld, Math.max(0, contender.reportedLost()));
            // only now: full collections of a big heap may stop this JVM for longer than a short lease
            long heapAfter = usedHeapAfterGc();
            releaseNow.countDown();
            for (Thread holder : holders) {
                holder.join(TimeUnit.MINUTES.toMillis(10));
            }
            return new double[] { (double) (memoryAfter - memoryBefore) / locks, (double) (keysAfter - keysBefore) / locks,
                    (double) (heapAfter - heapBefore) / locks, (double) ServerStats.scriptCalls(calls) / ticksPerWindow,
                    (double) ServerStats.allCalls(calls) / ticksPerWindow, cpuNanos / 1e6 / ticksPerWindow, lost,
                    acquireSeconds };
        }
    }

    private static void holdThenRelease(ScaleContender contender, List<String> keys, CountDownLatch allHeld,
            CountDownLatch releaseNow, AtomicReference<Throwable> failure) {
        Object[] handles = new Object[keys.size()];
        try {
            for (int i = 0; i < handles.length; i++) {
                handles[i] = contender.hold(keys.get(i));
            }
        }
        catch (Throwable ex) {
            failure.compareAndSet(null, ex);
        }
        allHeld.countDown();
        try {
            releaseNow.await();
            for (Object handle : handles) {
                if (handle != null) {
                    contender.release(handle);
                }
            }
        }
        catch (Throwable ex) {
            failure.compareAndSet(null, ex);
        }
    }

    static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
