package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a hand-off ends when something lands in its middle (issue 31, defects 2, 3, 4 and 7 from outside): a renewal
 * refusal during a linger, a cancel or a close while the successor's token reservation is on its way, and
 * {@code closeAsync()} on a turn that would linger. Replies are held by the test ({@link GatedServer}), so each
 * window is as wide as the test wants, on a real server; every test failed before its fix.
 */
class HandOffEndingsTest extends EveryServerEngineTest {

    /** A lease of 3 s (a renewal each second), a long linger, a turn check the test chooses. */
    private static LockEngineSettings settings(Duration turnCheck, Duration linger) {
        return EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(3))
            .withHandOff(new LockEngineSettings.HandOff(64, turnCheck, linger));
    }

    /**
     * Defect 2: a renewal sent while a thread held the lock, refused (the key had gone to another client) while that
     * thread's release lingered for a thread of its turn, was dropped: the linger then handed the lost lease to the
     * next local thread, so another client and this JVM both held the key, and nobody was told.
     */
    @Test
    void aRenewalRefusedDuringALingerLosesTheLeaseInsteadOfHandingItOn() throws Exception {
        GatedServer server = new GatedServer(fixture.server(fixture.connectionFactory(), "lock:"));
        DefaultLockEngine engine = fixture.engine(fixture.track(server), settings(Duration.ofSeconds(30),
                Duration.ofSeconds(20)));
        String key = "linger-refused";
        engine.lock("warm-up", Duration.ofSeconds(5)).close();
        LockHandle first = engine.lock(key, Duration.ofSeconds(5));
        SecondHolder second = SecondHolder.start(engine, key);
        first.close(); // handed to the second thread: the turn had a hand-off, so its release may linger
        LockHandle handed = second.handle.get(5, TimeUnit.SECONDS);
        server.holdRenewals(true);
        Await.until(Duration.ofSeconds(5), "a renewal of the handed lock is on its way", () -> server.heldRenewals() > 0);
        // the key goes to another client meanwhile (as after an expiry the watchdog did not see)
        redis.server().command("DEL", "lock:{" + key + "}");
        DefaultLockEngine other = fixture.engine(settings(Duration.ofSeconds(30), Duration.ZERO));
        LockHandle others = other.tryLock(key, Duration.ofSeconds(5), null).orElseThrow();
        CompletableFuture<Long> released = second.release();
        Await.until(Duration.ofSeconds(5), "the second thread's release lingers", second::lingering);
        server.holdRenewals(false); // the refusal lands inside the linger
        Await.until(Duration.ofSeconds(5), "the second thread was told it lost the lock",
                () -> toldLost(handed));
        released.get(5, TimeUnit.SECONDS);
        Optional<LockHandle> again = engine.tryLock(key, Duration.ofMillis(300), null);
        again.ifPresent(LockHandle::close);
        assertThat(again).as("this JVM got the key while another client holds it").isEmpty();
        assertThat(others.isHeld()).isTrue();
        others.close();
    }

    /**
     * Defect 3: the successor's waiter cancelled while its token reservation was on its way ended the take-over
     * without reading the answer: the key had gone from Redis under the holder that handed it on, and that holder
     * was never told.
     */
    @Test
    void aCancelDuringATakeOverStillTellsTheHolderBeforeThatItsLeaseWasLost() throws Exception {
        String key = "cancelled-take-over";
        TakeOver takeOver = TakeOver.begin(fixture, key);
        redis.server().command("DEL", "lock:{" + key + "}"); // lost under the first holder
        LockHandle first = takeOver.handOn();
        takeOver.waiter.cancel(false);
        GatedServer server = takeOver.server;
        DefaultLockEngine engine = takeOver.engine;
        server.holdReservations(false); // Redis answers: the owner token no longer has the key
        Await.until(Duration.ofSeconds(5), "the first holder was told its lease was lost", () -> toldLost(first));
        Optional<LockHandle> next = engine.tryLock(key, Duration.ofSeconds(5), null);
        assertThat(next).as("the key is free for the next caller").isPresent();
        next.get().close();
    }

    /**
     * Defect 4: the engine closed while a hand-off's successor was being taken over: nobody released the successor's
     * owner token (no caller had its handle yet), so the key stayed taken in Redis for a whole lease after close().
     */
    @Test
    void closingTheEngineDuringATakeOverLeavesNothingHeldInRedis() throws Exception {
        String key = "closed-take-over";
        TakeOver takeOver = TakeOver.begin(fixture, key);
        takeOver.handOn();
        GatedServer server = takeOver.server;
        DefaultLockEngine engine = takeOver.engine;
        CompletableFuture<Optional<LockHandle>> waiter = takeOver.waiter;
        // Redis answers a moment after close() began (the reservation confirms the lease: the key is still ours)
        CompletableFuture.runAsync(() -> server.holdReservations(false),
                CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS));
        engine.close();
        assertThat(lockKeyExists(key)).as("the key is still taken in Redis after close() returned").isFalse();
        assertThat(waiter.handle((handle, error) -> handle == null || handle.isEmpty()).get(5, TimeUnit.SECONDS))
            .isTrue();
    }

    /**
     * Defect 7: {@code closeAsync()} on a turn that would linger blocked its caller for the whole linger, although it
     * promises not to block.
     */
    @Test
    void closeAsyncNeverLingers() throws Exception {
        DefaultLockEngine engine = fixture.engine(settings(Duration.ofSeconds(30), Duration.ofSeconds(20)));
        String key = "close-async";
        engine.lock("warm-up", Duration.ofSeconds(5)).close();
        LockHandle first = engine.lock(key, Duration.ofSeconds(5));
        SecondHolder second = SecondHolder.start(engine, key);
        first.close();
        second.handle.get(5, TimeUnit.SECONDS);
        long returned = second.releaseAsync().get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(returned - second.releaseAsked)).as("closeAsync() returned after")
            .isLessThan(Duration.ofSeconds(5));
        Await.until(Duration.ofSeconds(5), "released in Redis", () -> !lockKeyExists(key));
    }

    private boolean toldLost(LockHandle handle) {
        return fixture.lost.stream().anyMatch(lost -> lost.fencingToken() == handle.fencingToken());
    }

    /**
     * A holder and an asynchronous waiter for the key on an engine whose token reservations the test holds back;
     * with a turn check of 1 ms, the hand-off to the waiter reserves tokens in Redis first.
     */
    private record TakeOver(GatedServer server, DefaultLockEngine engine, LockHandle first,
            CompletableFuture<Optional<LockHandle>> waiter) {

        static TakeOver begin(EngineFixture fixture, String key) {
            GatedServer server = new GatedServer(fixture.server(fixture.connectionFactory(), "lock:"));
            DefaultLockEngine engine = fixture.engine(fixture.track(server), settings(Duration.ofMillis(1), Duration.ZERO));
            engine.lock("warm-up", Duration.ofSeconds(5)).close();
            LockHandle first = engine.lock(key, Duration.ofSeconds(5));
            CompletableFuture<Optional<LockHandle>> waiter = engine.tryLockAsync(key, Duration.ofSeconds(10), null)
                .toCompletableFuture();
            Await.until(Duration.ofSeconds(5), "the waiter queued", () -> engine.locallyQueuedCount() == 1);
            long grantedAt = System.nanoTime();
            Await.until(Duration.ofSeconds(1), "the turn check passed", () -> System.nanoTime() - grantedAt > 5_000_000L);
            return new TakeOver(server, engine, first, waiter);
        }

        /** The holder hands the lock on; returns once the successor's reservation is held back on its way. */
        LockHandle handOn() {
            server.holdReservations(true);
            first.close();
            Await.until(Duration.ofSeconds(5), "the successor's reservation is on its way", () -> server.heldReservations() > 0);
            return first;
        }
    }

    /** A second thread that queues for the key, holds it once handed over, and releases when told. */
    private static final class SecondHolder {

        final CompletableFuture<LockHandle> handle = new CompletableFuture<>();

        final CompletableFuture<Long> releasedAt = new CompletableFuture<>();

        private final CountDownLatch release = new CountDownLatch(1);

        private volatile boolean async;

        volatile long releaseAsked;

        private Thread thread;

        static SecondHolder start(DefaultLockEngine engine, String key) {
            SecondHolder second = new SecondHolder();
            second.thread = new Thread(() -> second.run(engine, key), "second-holder");
            second.thread.setDaemon(true);
            second.thread.start();
            Await.until(Duration.ofSeconds(5), "the second thread waits", () -> engine.locallyQueuedCount() == 1);
            return second;
        }

        private void run(DefaultLockEngine engine, String key) {
            try {
                LockHandle held = engine.lock(key, Duration.ofSeconds(5));
                handle.complete(held);
                release.await();
                if (async) {
                    held.closeAsync();
                }
                else {
                    held.close();
                }
                releasedAt.complete(System.nanoTime());
            }
            catch (Throwable ex) {
                handle.completeExceptionally(ex);
                releasedAt.completeExceptionally(ex);
            }
        }

        CompletableFuture<Long> release() {
            releaseAsked = System.nanoTime();
            release.countDown();
            return releasedAt;
        }

        CompletableFuture<Long> releaseAsync() {
            async = true;
            return release();
        }

        /** Whether the thread waits inside its release (parked in the key's line). */
        boolean lingering() {
            return thread.getState() == Thread.State.TIMED_WAITING && java.util.Arrays.stream(thread.getStackTrace())
                .anyMatch(frame -> frame.getClassName().endsWith("key.KeyLine") && frame.getMethodName().equals("release"));
        }
    }

    /** Holds renewal or token-reservation replies while the test says so; every call reaches the real server. */
    static final class GatedServer extends ForwardingLockServer {

        private volatile CompletableFuture<Void> renewals = CompletableFuture.completedFuture(null);

        private volatile CompletableFuture<Void> reservations = CompletableFuture.completedFuture(null);

        private final java.util.concurrent.atomic.AtomicInteger heldRenewals = new java.util.concurrent.atomic.AtomicInteger();

        private final java.util.concurrent.atomic.AtomicInteger heldReservations = new java.util.concurrent.atomic.AtomicInteger();

        GatedServer(LockServer real) {
            super(real);
        }

        void holdRenewals(boolean hold) {
            renewals = gate(renewals, hold);
        }

        void holdReservations(boolean hold) {
            reservations = gate(reservations, hold);
        }

        int heldRenewals() {
            return heldRenewals.get();
        }

        int heldReservations() {
            return heldReservations.get();
        }

        private static CompletableFuture<Void> gate(CompletableFuture<Void> current, boolean hold) {
            if (hold) {
                return current.isDone() ? new CompletableFuture<>() : current;
            }
            current.complete(null);
            return current;
        }

        @Override
        public CompletableFuture<Boolean> renew(LockKeys keys, dev.leasehold.LockMode mode, String token, long leaseMillis) {
            CompletableFuture<Void> gate = renewals;
            if (gate.isDone()) {
                return real.renew(keys, mode, token, leaseMillis);
            }
            heldRenewals.incrementAndGet();
            // sent when the gate opens: Redis sees the renewal after what the test did meanwhile
            return gate.thenCompose(ignored -> real.renew(keys, mode, token, leaseMillis));
        }

        @Override
        public java.util.List<CompletableFuture<Boolean>> renewAll(java.util.List<Renewal> batch) {
            return batch.stream().map(r -> renew(r.keys(), r.mode(), r.token(), r.leaseMillis())).toList();
        }

        @Override
        public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
            CompletableFuture<Void> gate = reservations;
            if (gate.isDone()) {
                return real.reserveFences(keys, token, leaseMillis);
            }
            heldReservations.incrementAndGet();
            return gate.thenCompose(ignored -> real.reserveFences(keys, token, leaseMillis));
        }
    }
}
