package dev.leasehold.benchmarks.scale;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.benchmarks.server.ServerCounters;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * Item 3 of the Scale part: {@code keys} keys, each held, with {@code waitersPerKey} callers waiting on it
 * spread over {@link #CLIENTS} independent clients in this JVM (half of them blocked threads, half
 * {@code tryLockAsync} where the library has it). Every holder keeps its key for {@code hold}; the first holders
 * release at an even pace over one hold time, so releases keep coming at keys / hold per second while the rest
 * wait, and each key passes down its line of waiters. Wake-up latency is the time from a key's release to its
 * next grant (one clock: every client is in this JVM). With a zero hold every key is released at once and
 * passed on at once: a burst, which measures throughput rather than wake-up.
 */
final class WaitersPart {

    static final String[] METRICS = { "wake-up p50 ms", "wake-up p99 ms", "subscriptions / client",
            "script calls / grant", "Redis commands / grant", "caller threads", "library threads", "not granted",
            "granted before release" };

    static final int CLIENTS = 4;

    private static final int HOLDER_THREADS = 8;

    private static final Duration WAIT = Duration.ofSeconds(60);

    private WaitersPart() {
    }

    static double[] measure(String contenderId, TestRedisServer redis, int keys, int waitersPerKey, Duration lease,
            Duration hold) throws Exception {
        redis.command("FLUSHALL");
        ScheduledExecutorService asyncReleases = Executors.newSingleThreadScheduledExecutor(
                task -> new Thread(task, "scale-async-releases"));
        int threadsBefore = libraryThreads();
        List<ScaleContender> clients = new ArrayList<>();
        Redis address = new Redis(redis.host(), redis.port());
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(ScaleContender.create(contenderId, address, lease));
        }
        try {
            String run = "wait-" + Long.toString(System.nanoTime(), 36) + "-";
            AtomicLongArray releasedAt = new AtomicLongArray(keys);
            java.util.concurrent.atomic.AtomicIntegerArray releasedBy = new java.util.concurrent.atomic.AtomicIntegerArray(keys);
            long[][] split = new long[4][keys * waitersPerKey];
            for (int k = 0; k < keys; k++) {
                releasedBy.set(k, k % CLIENTS);
            }
            int waiters = keys * waitersPerKey;
            long[] latencies = new long[waiters];
            AtomicLong granted = new AtomicLong();
            AtomicLong notGranted = new AtomicLong();
            AtomicLong grantedBeforeRelease = new AtomicLong();
            CountDownLatch done = new CountDownLatch(waiters);
            CountDownLatch held = new CountDownLatch(HOLDER_THREADS);
            CountDownLatch releaseHolders = new CountDownLatch(1);
            List<Thread> holders = new ArrayList<>();
            for (int t = 0; t < HOLDER_THREADS; t++) {
                int from = t * keys / HOLDER_THREADS;
                int to = (t + 1) * keys / HOLDER_THREADS;
                Thread holder = new Thread(() -> holdThenRelease(clients, run, from, to, keys, hold, releasedAt, held,
                        releaseHolders),
                        "scale-waiters-holder-" + t);
                holder.setDaemon(true);
                holders.add(holder);
                holder.start();
            }
            if (!held.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException(contenderId + ": holders did not take their keys");
            }
            CountDownLatch asked = new CountDownLatch(waiters);
            int callerThreads = 0;
            for (int w = 0; w < waiters; w++) {
                int key = w / waitersPerKey;
                int slot = w;
                ScaleContender client = clients.get(w % CLIENTS);
                boolean async = w % 2 == 1 && client.waitsAsync();
                Runnable onGranted = () -> {
                    long released = releasedAt.get(key);
                    if (released == 0) {
                        // the holder never released: its lease ran out while it held the key
                        grantedBeforeRelease.incrementAndGet();
                    }
                    else {
                        latencies[slot] = System.nanoTime() - released;
                        int kind = (releasedBy.get(key) == slot % CLIENTS ? 0 : 1) + (async ? 2 : 0);
                        split[kind][slot] = latencies[slot];
                        releasedBy.set(key, slot % CLIENTS);
                    }
                    granted.incrementAndGet();
                };
                if (async) {
                    long waiterId = 1_000_000L + w;
                    client.tryHoldAsync(run + key, WAIT, waiterId).whenComplete((handle, error) -> {
                        if (handle == null) {
                            notGranted.incrementAndGet();
                            done.countDown();
                            return;
                        }
                        onGranted.run();
                        // held for a while without a thread, then released
                        asyncReleases.schedule(() -> {
                            releasedAt.set(key, System.nanoTime());
                            client.releaseAsync(handle, waiterId).whenComplete((ignored, releaseError) -> done.countDown());
                        }, hold.toNanos(), TimeUnit.NANOSECONDS);
                    });
                    asked.countDown();
                    continue;
                }
                callerThreads++;
                Thread thread = new Thread(null, () -> {
                    asked.countDown();
                    try {
                        Object handle = client.tryHold(run + key, WAIT);
                        if (handle == null) {
                            notGranted.incrementAndGet();
                            return;
                        }
                        onGranted.run();
                        LockSupport.parkNanos(hold.toNanos());
                        releasedAt.set(key, System.nanoTime());
                        client.release(handle);
                    }
                    catch (Exception ex) {
                        notGranted.incrementAndGet();
                    }
                    finally {
                        done.countDown();
                    }
                }, "scale-waiter-" + w, 256 * 1024);
                thread.setDaemon(true);
                thread.start();
            }
            asked.await(5, TimeUnit.MINUTES);
            // every waiter has asked; give the tries time to reach Redis and settle into waiting
            Thread.sleep(Math.max(2000, waiters / 5));
            long subscriptions = ServerStats.subscriptions(redis);
            int libraryThreads = libraryThreads() - threadsBefore;
            ServerCounters before = ServerCounters.read(redis);
            releaseHolders.countDown();
            if (!done.await(WAIT.toSeconds() + 30 + hold.toSeconds() * waitersPerKey, TimeUnit.SECONDS)) {
                notGranted.addAndGet(done.getCount());
            }
            Map<String, Long> calls = ServerCounters.read(redis).callsSince(before);
            for (Thread holder : holders) {
                holder.join(TimeUnit.SECONDS.toMillis(30));
            }
            long grants = Math.max(1, granted.get());
            // what the commands per grant are made of (commandstats, inner script commands included)
            StringBuilder perCommand = new StringBuilder(contenderId + " commands per grant:");
            calls.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(call -> perCommand.append(String.format(" %s %.2f", call.getKey(), (double) call.getValue() / grants)));
            System.out.println(perCommand);
            long[] measured = java.util.Arrays.stream(latencies).filter(latency -> latency > 0).toArray();
            System.out.println(contenderId + " wake-ups by latency: " + histogram(measured));
            String[] kinds = { "same client, blocked", "other client, blocked", "same client, async", "other client, async" };
            for (int k = 0; k < 4; k++) {
                System.out.println("  " + kinds[k] + ": " + histogram(java.util.Arrays.stream(split[k]).filter(l -> l > 0).toArray()));
            }
            return new double[] { InstancesPart.quantileMillis(measured, 0.5), InstancesPart.quantileMillis(measured, 0.99),
                    (double) subscriptions / CLIENTS, (double) ServerStats.scriptCalls(calls) / grants,
                    (double) ServerStats.allCalls(calls) / grants, callerThreads, libraryThreads, notGranted.get(), grantedBeforeRelease.get() };
        }
        finally {
            clients.forEach(ScaleContender::close);
            asyncReleases.shutdownNow();
        }
    }

    private static final long[] BUCKET_MILLIS = { 5, 20, 50, 100, 250, 500, 1000, 1500, 2500, 5000, Long.MAX_VALUE };

    /** How many wake-ups fell under each bound (a tail at whole seconds points at a periodic look, not at load). */
    static String histogram(long[] latenciesNanos) {
        long[] counts = new long[BUCKET_MILLIS.length];
        for (long latency : latenciesNanos) {
            int bucket = 0;
            // the last bucket takes the rest (its bound in ns would overflow)
            while (bucket < BUCKET_MILLIS.length - 1 && latency > BUCKET_MILLIS[bucket] * 1_000_000L) {
                bucket++;
            }
            counts[bucket]++;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < counts.length; i++) {
            out.append(i == counts.length - 1 ? "more" : "<=" + BUCKET_MILLIS[i] + "ms").append(' ').append(counts[i]).append("  ");
        }
        return out.toString().trim();
    }

    /** Live threads that are not this benchmark's own (whose names start with "scale-"). */
    private static int libraryThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> !thread.getName().startsWith("scale-"))
            .count();
    }

    /**
     * Takes keys {@code from..to-1} (on the clients in turn), then, when told, releases key k at k / keys of the
     * hold time (so releases come at an even pace), stamping each release.
     */
    private static void holdThenRelease(List<ScaleContender> clients, String run, int from, int to, int keys,
            Duration hold, AtomicLongArray releasedAt, CountDownLatch held, CountDownLatch releaseHolders) {
        Object[] handles = new Object[to - from];
        try {
            for (int key = from; key < to; key++) {
                handles[key - from] = clients.get(key % CLIENTS).hold(run + key);
            }
            held.countDown();
            releaseHolders.await();
            long start = System.nanoTime();
            for (int key = from; key < to; key++) {
                LockSupport.parkNanos(start + hold.toNanos() * key / keys - System.nanoTime());
                releasedAt.set(key, System.nanoTime());
                clients.get(key % CLIENTS).release(handles[key - from]);
            }
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
