package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.redis.ScriptedLockServer;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On one server (standalone or Sentinel) the fair queue keeps a waiting instance's entries by one liveness key per
 * instance, not by a try per entry: instances queued on many keys behind long holds cost Redis about one look per
 * key and refresh interval (the head's), however many instances wait (issue 31, item 5).
 */
class QueueLivenessTest extends EveryServerEngineTest {

    private static final int KEYS = 8;

    private static final int INSTANCES = 4;

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @Test
    void instancesQueuedBehindLongHoldsDoNotEachRetryEveryRefreshInterval() throws Exception {
        DefaultLockEngine holder = fixture.engine();
        List<LockHandle> held = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            held.add(holder.lock("long-" + k, Duration.ZERO));
        }
        List<FaultyLockServer> servers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(KEYS * INSTANCES);
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            FaultyLockServer server = new FaultyLockServer(fixture.server("lock:"));
            assertThat(server.queueLiveness()).as("one server: liveness mode").isTrue();
            servers.add(server);
            DefaultLockEngine engine = fixture.engine(server, EngineFixture.fastSettings());
            for (int k = 0; k < KEYS; k++) {
                String key = "long-" + k;
                waiters.add(pool.submit(() -> {
                    try (LockHandle handle = engine.lock(key, Duration.ofSeconds(30))) {
                        return null;
                    }
                }));
            }
        }
        for (int k = 0; k < KEYS; k++) {
            String key = "long-" + k;
            Await.until(Duration.ofSeconds(10), "every instance queued on " + key, () -> queueLength(key) == INSTANCES);
        }
        servers.forEach(server -> server.acquires.set(0));
        long started = System.nanoTime();
        Thread.sleep(5 * FairQueue.DEFAULTS.refreshMillis() + 500); // the waiting itself is what is measured
        int tries = servers.stream().mapToInt(server -> server.acquires.get()).sum();
        long seconds = (System.nanoTime() - started) / 1_000_000_000L + 1;
        System.out.printf("%d instances waiting on %d keys: %d tries in %d s%n", INSTANCES, KEYS, tries, seconds);

        // per entry (a try per instance, key and refresh interval) it would be INSTANCES x KEYS x 6 = 192 (173 and 213
        // seen before the change); here each key's head looks once per refresh interval, the next one once per claim
        // timeout, the others not, and each waiter may try once more as its subscription is confirmed
        long heads = KEYS * (seconds * 1000 / FairQueue.DEFAULTS.refreshMillis() + 1);
        long nextInLine = KEYS * (seconds * 1000 / FairQueue.DEFAULTS.claimMillis() + 1);
        assertThat(tries).as("tries while %d instances wait on %d keys for %d s", INSTANCES, KEYS, seconds)
            .isLessThanOrEqualTo((int) (heads + nextInLine + INSTANCES * KEYS));
        for (int k = 0; k < KEYS; k++) {
            assertThat(queueLength("long-" + k)).as("nobody dropped out of the queue of long-" + k).isEqualTo(INSTANCES);
        }

        held.forEach(LockHandle::close);
        for (Future<?> waiter : waiters) {
            waiter.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
    }

    /**
     * A waiter already queued does not write its instance's liveness key at each look (its instance's heartbeat does,
     * once per refresh interval): the heartbeat stops only after a whole interval without a sleeping waiter, and
     * starts again with a write at once, so a lone waiter awake for its look never leaves the key to expire. The
     * tightest timing a user may set (an entry timeout of twice the refresh interval), one waiter looking every
     * interval for ten of them, each look answered late (0.4 of an interval; a reply later than the entry
     * timeout less an interval leaves a gap after the first try by design): the key is there at every sample and the
     * waiter keeps its place. (With a heartbeat that stopped at the first beat without a sleeper and started again an
     * interval later, the key lapsed whenever a beat fell inside a look.)
     */
    @Test
    void aLoneQueuedWaitersInstanceStaysAliveBetweenItsLooks() throws Exception {
        DefaultLockEngine holder = fixture.engine();
        LockHandle held = holder.lock("lone", Duration.ZERO);
        FairQueue tight = new FairQueue(Duration.ofMillis(600), Duration.ofMillis(600), Duration.ofMillis(300), 16);
        LockServer slowLooks = fixture.track(new ForwardingLockServer(serverOn(tight)) {
            @Override
            public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
                    long writerWaitingMillis, String waiterId, QueueTry queueTry) {
                return real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry)
                    .thenCompose(grant -> CompletableFuture.supplyAsync(() -> grant,
                            CompletableFuture.delayedExecutor(120, TimeUnit.MILLISECONDS)));
            }
        });
        DefaultLockEngine waiting = fixture.engine(slowLooks, EngineFixture.fastSettings().withFairQueue(tight));
        String liveness = LockKeys.instancePrefix("lock:") + waiting.instanceId();
        Future<Long> waiter = queuedWaiter(waiting, "lone");
        long until = System.nanoTime() + 10 * tight.refreshMillis() * 1_000_000L;
        int samples = 0;
        while (System.nanoTime() < until) {
            assertThat(redis.server().command("EXISTS", liveness)).as("the waiting instance's liveness key, sample "
                    + samples).isEqualTo("1");
            samples++;
            Thread.sleep(5); // sampling, not waiting for a condition
        }
        assertThat(queueLength("lone")).as("the waiter kept its place").isEqualTo(1);
        held.close();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isPositive();
    }

    /**
     * A head behind a long hold looks between its tries (LockServer#lookWhileQueued: four commands, nothing written)
     * while the expiry its last try gave its queue entry (three sleeps plus the entry timeout) still covers the sleep
     * after the look with a third of the entry timeout to spare: here (refresh 300 ms, entry timeout 900 ms) a try,
     * then four looks, then a try. It keeps its place (its entry, with its arrival, is never dropped and joined again)
     * and is granted the key at the release, by the release's message.
     */
    @Test
    void aHeadBehindALongHoldLooksBetweenItsTriesAndKeepsItsPlace() throws Exception {
        DefaultLockEngine holder = fixture.engine();
        LockHandle held = holder.lock("looked-at", Duration.ZERO);
        FairQueue timing = new FairQueue(Duration.ofMillis(900), Duration.ofMillis(600), Duration.ofMillis(300), 16);
        AtomicInteger tries = new AtomicInteger();
        AtomicInteger looks = new AtomicInteger();
        LockServer counting = fixture.track(new ForwardingLockServer(serverOn(timing)) {
            @Override
            public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
                    long writerWaitingMillis, String waiterId, QueueTry queueTry) {
                tries.incrementAndGet();
                return real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry);
            }

            @Override
            public CompletableFuture<Grant> lookWhileQueued(LockKeys keys, String waiterId) {
                looks.incrementAndGet();
                return real.lookWhileQueued(keys, waiterId);
            }
        });
        DefaultLockEngine waiting = fixture.engine(counting, EngineFixture.fastSettings().withFairQueue(timing));
        Future<Long> waiter = queuedWaiter(waiting, "looked-at");
        String queue = LockKeys.of("lock:", "looked-at").queue();
        String arrival = redis.server().command("ZRANGE", queue, "0", "-1", "WITHSCORES");
        tries.set(0);
        looks.set(0);
        Await.until(Duration.ofSeconds(20), "ten looks or tries", () -> tries.get() + looks.get() >= 10);

        assertThat(looks.get()).as("looks (tries: %d)", tries.get()).isGreaterThanOrEqualTo(tries.get());
        assertThat(redis.server().command("ZRANGE", queue, "0", "-1", "WITHSCORES")).as("the same entry, same arrival")
            .isEqualTo(arrival);
        long releasedAt = System.nanoTime();
        held.close();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isPositive();
        assertThat((System.nanoTime() - releasedAt) / 1_000_000).as("ms from the release to the grant, woken by it")
            .isLessThan(timing.refreshMillis());
    }

    /** The server's scripts on {@code timing}, as the engine's heartbeat will be (auto-configuration sets both). */
    private LockServer serverOn(FairQueue timing) {
        return ((ScriptedLockServer) fixture.server("lock:")).fairQueue(timing);
    }

    /** A caller of {@code engine} that waits for {@code key}, once it queued in Redis; its fencing token when granted. */
    private Future<Long> queuedWaiter(DefaultLockEngine engine, String key) {
        Future<Long> waiter = callers.submit(() -> {
            try (LockHandle handle = engine.lock(key, Duration.ofSeconds(30))) {
                return handle.fencingToken();
            }
        });
        Await.until(Duration.ofSeconds(10), "the waiter queued on " + key, () -> queueLength(key) == 1);
        return waiter;
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    private int queueLength(String key) {
        return Integer.parseInt(redis.server().command("ZCARD", LockKeys.of("lock:", key).queue()).trim());
    }
}
