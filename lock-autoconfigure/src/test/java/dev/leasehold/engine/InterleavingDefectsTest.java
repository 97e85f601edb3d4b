package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockKeys;

/**
 * Defects found from outside where hand-off, cancel, renewal and re-entry meet (issue 19), each reproduced
 * here the way it was found; every test failed before its fix.
 */
class InterleavingDefectsTest extends EveryServerEngineTest {

    /**
     * Defect 1: a local waiter that gives up while the holder's close() hands the lock to it stranded the key's
     * local queue: Redis had the key free, but every later caller of the JVM waited to its deadline. Before the
     * fix, the fixed-lease tryLock behind it timed out within a few hundred rounds.
     */
    @Test
    void aWaiterGivingUpWhileTheLockIsHandedToItDoesNotStrandTheKey() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        String key = "stranded";
        engine.lock(key, Duration.ofSeconds(5)).close(); // connected, scripts loaded
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8); // before the fix: stranded within 100 rounds
        int rounds = 0;
        while (rounds < 3000 && System.nanoTime() < deadline) {
            rounds++;
            LockHandle holder = engine.lock(key, Duration.ofSeconds(5));
            CompletableFuture<Optional<LockHandle>> waiter = engine.tryLockAsync(key, Duration.ofSeconds(10), null)
                .toCompletableFuture();
            Await.until(Duration.ofSeconds(5), "the waiter queued", () -> engine.locallyQueuedCount() == 1);
            // behind it a fixed-lease caller, which a hand-off passes over (it must start its own lease in Redis)
            CompletableFuture<Optional<LockHandle>> behind = CompletableFuture
                .supplyAsync(() -> engine.tryLock(key, Duration.ofSeconds(3), Duration.ofSeconds(5)));
            Await.until(Duration.ofSeconds(5), "the fixed-lease caller queued", () -> engine.locallyQueuedCount() == 2);
            // the give-up lands anywhere from 800 µs before the close to 200 µs after it, spread over the rounds
            long offsetNanos = (rounds * 7919L) % 1_000_000 - 800_000;
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Void> cancel = CompletableFuture.runAsync(() -> {
                await(go);
                spin(offsetNanos);
                waiter.cancel(false);
            });
            go.countDown();
            spin(-offsetNanos);
            holder.close();
            cancel.join();
            if (!waiter.isCancelled()) {
                waiter.join().ifPresent(LockHandle::close); // it took the lock before the cancel: give it back
            }
            Optional<LockHandle> next = behind.get(10, TimeUnit.SECONDS);
            if (next.isEmpty()) {
                fail("round " + rounds + ": the fixed-lease tryLock behind the waiter that gave up waited its 3 s out; "
                        + "Redis says locked=" + engine.isLocked(key));
            }
            next.get().close();
        }
        assertThat(engine.localGateCount()).isZero();
    }

    /**
     * Defect 3: a renewal refused (the key vanished) while a hand-off's token reservation is in flight reported
     * the loss for the successor no caller had received yet: fencing token 0, and isHeld()/close() threw a
     * NullPointerException. Only acquisitions a caller received are reported, with their real tokens.
     */
    @Test
    void aLossFoundWhileAHandOffIsOnItsWayIsReportedOnlyForLocksCallersReceived() throws Exception {
        HeldReplies server = fixture.track(new HeldReplies(fixture.server("lock:")));
        // renewals every second: the held one is sent while the lease estimate still allows a hand-off
        DefaultLockEngine engine = fixture.engine(server, EngineFixture.fastSettings().withLeaseTime(Duration.ofMillis(3000)));
        String key = "phantom";
        Set<Long> received = ConcurrentHashMap.newKeySet();
        LockHandle first = engine.lock(key, Duration.ofSeconds(5));
        received.add(first.fencingToken());
        CompletableFuture<LockHandle> second = CompletableFuture.supplyAsync(() -> engine.lock(key, Duration.ofSeconds(10)));
        Await.until(Duration.ofSeconds(5), "the second thread queued", () -> engine.locallyQueuedCount() == 1);
        server.hold.set(true);
        // the watchdog's next renewal is on its way (held back); it will find the key gone, as after a failover
        Await.until(Duration.ofSeconds(5), "a renewal was sent", () -> server.heldRenewals.size() == 1);
        redis.server().command("DEL", LockKeys.of("lock:", key).lock());
        // more than the turn check (25 ms) into the turn: the hand-off reserves tokens first
        first.close(); // handed to the second thread, whose token reservation is held back too
        Await.until(Duration.ofSeconds(5), "the reservation was sent", () -> server.heldReservations.size() == 1);
        server.release(server.heldRenewals); // refused: the renewal's reply lands while the hand-off is on its way
        Await.until(Duration.ofSeconds(5), "the watchdog found the lease lost", () -> !fixture.lost.isEmpty());
        server.hold.set(false);
        server.release(server.heldReservations);

        LockHandle secondHandle = second.get(10, TimeUnit.SECONDS);
        received.add(secondHandle.fencingToken());
        assertThat(secondHandle.isHeld()).isTrue();
        assertThat(secondHandle.fencingToken()).isGreaterThan(first.fencingToken());
        secondHandle.close();
        for (LockHandle lost : fixture.lost) {
            assertThat(lost.fencingToken()).as("token of a reported loss").isIn(received);
            assertThat(lost.isHeld()).isFalse(); // threw NullPointerException before the fix
            lost.close();
        }
    }

    /**
     * Defect 5: a thread whose lease ran out (renewals could not reach Redis) but was not marked lost yet
     * re-entered its key and was granted at once, while another instance already held the key: two holders.
     * Re-entry is granted only while the lease is known good.
     */
    @Test
    void reEntryIsRefusedOnceTheLeaseRanOutEvenBeforeTheWatchdogGaveUp() throws Exception {
        FaultyLockServer cutOff = fixture.track(new FaultyLockServer(fixture.server("lock:")));
        // replies to renewals never come: the watchdog waits up to the Redis timeout (2 s) before it judges
        DefaultLockEngine holderEngine = fixture.engine(cutOff, EngineFixture.fastSettings()
            .withLeaseTime(Duration.ofMillis(1000)).withRedisTimeout(Duration.ofSeconds(2)));
        DefaultLockEngine other = fixture.engine();
        String key = "reentry";
        LockHandle held = holderEngine.lock(key, Duration.ofSeconds(5));
        cutOff.hangRenewals(true);
        LockHandle taken = other.lock(key, Duration.ofSeconds(5)); // the key expires in Redis: the other takes it
        assertThat(taken.isHeld()).isTrue();

        assertThatThrownBy(() -> holderEngine.tryLock(key, Duration.ZERO, null))
            .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("lost");
        assertThatThrownBy(() -> holderEngine.lock(key, Duration.ofMillis(100)))
            .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("lost");
        assertThat(held.isHeld()).isFalse();
        Await.until(Duration.ofSeconds(5), "the loss was reported", () -> fixture.lost.size() == 1);
        assertThat(fixture.lost.get(0).fencingToken()).isEqualTo(held.fencingToken());
        held.close(); // never deletes the other's key
        assertThat(taken.isHeld()).isTrue();
        assertThat(other.isLocked(key)).isTrue();
        taken.close();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void spin(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    /** Holds renewals and token reservations back while told to (the replies come when the test says). */
    static final class HeldReplies extends ForwardingLockServer {

        final java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();

        final List<Runnable> heldRenewals = new java.util.concurrent.CopyOnWriteArrayList<>();

        final List<Runnable> heldReservations = new java.util.concurrent.CopyOnWriteArrayList<>();

        HeldReplies(LockServer real) {
            super(real);
        }

        @Override
        public CompletableFuture<Boolean> renew(LockKeys keys, dev.leasehold.LockMode mode, String token, long leaseMillis) {
            return hold.get() ? later(heldRenewals, () -> real.renew(keys, mode, token, leaseMillis))
                    : real.renew(keys, mode, token, leaseMillis);
        }

        @Override
        public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
            return hold.get() ? later(heldReservations, () -> real.reserveFences(keys, token, leaseMillis))
                    : real.reserveFences(keys, token, leaseMillis);
        }

        private static <T> CompletableFuture<T> later(List<Runnable> queue,
                java.util.function.Supplier<CompletableFuture<T>> call) {
            CompletableFuture<T> reply = new CompletableFuture<>();
            queue.add(() -> call.get().whenComplete((value, error) -> {
                if (error != null) {
                    reply.completeExceptionally(error);
                }
                else {
                    reply.complete(value);
                }
            }));
            return reply;
        }

        void release(List<Runnable> queue) {
            List<Runnable> due = new ArrayList<>(queue);
            queue.clear();
            due.forEach(Runnable::run);
        }
    }
}
