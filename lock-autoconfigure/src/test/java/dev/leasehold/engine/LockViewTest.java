package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

import dev.leasehold.LockHandle;
import dev.leasehold.LockLostException;
import dev.leasehold.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code LockService.asLock(key)}: the {@link Lock} contract across two clients on a real Redis. */
class LockViewTest extends RealRedisEngineTest {

    /** Renewed every 200 ms: a holder cut off from Redis loses the key within a second. */
    private static final LockEngineSettings SHORT_LEASE = EngineFixture.fastSettings().withLeaseTime(Duration.ofMillis(600));

    @Test
    void twoClientsExcludeEachOtherAndAWaiterIsWokenByTheUnlock() throws Exception {
        Lock mine = fixture.engine().asLock("printer");
        Lock theirs = fixture.engine().asLock("printer");
        mine.lock();
        assertThat(redis.server().command("EXISTS", "lock:{printer}")).isEqualTo("1");
        assertThat(CompletableFuture.supplyAsync(theirs::tryLock).get(5, TimeUnit.SECONDS)).isFalse();

        long[] waitedMillis = new long[1];
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            long started = System.nanoTime();
            try {
                boolean taken = theirs.tryLock(20, TimeUnit.SECONDS);
                waitedMillis[0] = (System.nanoTime() - started) / 1_000_000;
                theirs.unlock();
                return taken;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        Thread.sleep(300); // let it wait
        mine.unlock();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isTrue();
        // woken by the release, not by the end of a 30 s lease or the 20 s wait
        assertThat(waitedMillis[0]).isLessThan(10_000);
        assertThat(redis.server().command("EXISTS", "lock:{printer}")).isEqualTo("0");
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrowsIllegalMonitorState() throws Exception {
        Lock lock = fixture.engine().asLock("owned");
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
            .withMessageContaining("owned");
        lock.lock();
        CompletableFuture<Void> otherThread = CompletableFuture.runAsync(lock::unlock);
        assertThatThrownBy(() -> otherThread.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(IllegalMonitorStateException.class);
        // still held by the owner
        assertThat(redis.server().command("EXISTS", "lock:{owned}")).isEqualTo("1");
        lock.unlock();
        assertThat(redis.server().command("EXISTS", "lock:{owned}")).isEqualTo("0");
    }

    @Test
    void reEntryNeedsAsManyUnlocks() {
        Lock lock = fixture.engine().asLock("nested");
        Lock other = fixture.engine().asLock("nested");
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(redis.server().command("EXISTS", "lock:{nested}")).isEqualTo("1");
        assertThat(other.tryLock()).isFalse();
        lock.unlock();
        assertThat(redis.server().command("EXISTS", "lock:{nested}")).isEqualTo("0");
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
    }

    @Test
    void lockInterruptiblyStopsWaitingWhenInterruptedAndHoldsNothing() throws Exception {
        Lock held = fixture.engine().asLock("busy");
        Lock waiting = fixture.engine().asLock("busy");
        held.lock();
        AtomicBoolean interrupted = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            try {
                waiting.lockInterruptibly();
            }
            catch (InterruptedException ex) {
                interrupted.set(true);
            }
        });
        waiter.start();
        Thread.sleep(300);
        long started = System.nanoTime();
        waiter.interrupt();
        waiter.join(10_000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(interrupted).isTrue();
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5000);
        held.unlock();
        // the interrupted waiter's withdrawal (sent before it returned) may reach Redis after the release, which then
        // granted the key to its queue entry: the withdrawal takes that grant back at once
        Await.until(Duration.ofSeconds(2), "nothing held", () -> "0".equals(redis.server().command("EXISTS", "lock:{busy}")));
        // an interrupted thread is refused at once
        Thread.currentThread().interrupt();
        assertThatExceptionOfType(InterruptedException.class).isThrownBy(waiting::lockInterruptibly);
        assertThat(Thread.interrupted()).isFalse();
    }

    @Test
    void lockIgnoresInterruptsButKeepsTheStatus() throws Exception {
        Lock held = fixture.engine().asLock("patient");
        Lock waiting = fixture.engine().asLock("patient");
        held.lock();
        AtomicBoolean statusKept = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            waiting.lock();
            statusKept.set(Thread.currentThread().isInterrupted());
            Thread.interrupted();
            waiting.unlock();
        });
        waiter.start();
        Thread.sleep(200);
        waiter.interrupt();
        Thread.sleep(200);
        assertThat(waiter.isAlive()).isTrue();
        held.unlock();
        waiter.join(10_000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(statusKept).isTrue();
    }

    @Test
    void unlockAfterTheLeaseWasLostThrowsForEachHoldAndLeavesTheNewOwnersKeyAlone() {
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine mine = fixture.engine(cutOff, SHORT_LEASE);
        Lock lock = mine.asLock("expiring");
        lock.lock();
        lock.lock();
        cutOff.failRenewals(true); // as if this JVM froze or lost its network: the lease runs out
        LockHandle theirs = fixture.engine(SHORT_LEASE).lock("expiring", Duration.ofSeconds(10));
        String theirToken = redis.server().command("GET", "lock:{expiring}");

        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
            .withMessageContaining("'expiring' was lost");
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
            .satisfies(lost -> assertThat(lost.getKey()).isEqualTo("expiring"));
        assertThat(redis.server().command("GET", "lock:{expiring}")).isEqualTo(theirToken);
        assertThat(mine.heldLockCount()).isZero();
        assertThat(mine.localGateCount()).isZero();
        // both holds are given up: this thread holds nothing now
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
            .isNotInstanceOf(LockLostException.class);
        theirs.close();
    }

    @Test
    void aLossFoundOnlyByTheReleaseIsReportedByUnlock() {
        Lock lock = fixture.engine().asLock("vanished");
        lock.lock();
        redis.server().command("DEL", "lock:{vanished}"); // a failover to a replica that missed the write
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        assertThat(fixture.lost).hasSize(1);
    }

    @Test
    void aThreadWhoseLockWasLostIsRefusedWhileAnotherInstanceHoldsItAndWaitsWithoutSpinning() throws Exception {
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine mine = fixture.engine(cutOff, SHORT_LEASE);
        Lock lock = mine.asLock("taken-over");
        lock.lock();
        cutOff.failRenewals(true);
        LockHandle theirs = fixture.engine(SHORT_LEASE).lock("taken-over", Duration.ofSeconds(10));
        cutOff.failRenewals(false);

        // not a re-entry of the lost lock (two holders), not an exception: the lock is not available
        assertThat(lock.tryLock()).isFalse();
        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();

        long started = System.nanoTime();
        int acquiresBefore = cutOff.acquires.get();
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            try {
                Await.until(Duration.ofSeconds(10), "lock() waits", () -> mine.waitingCount() == 1);
                // it sleeps until the holder's lease end or the fair queue's refresh (at most a second), not spinning
                Await.until(Duration.ofSeconds(10), "lock() tries again",
                        () -> cutOff.acquires.get() >= acquiresBefore + 2);
                long waitedMillis = (System.nanoTime() - started) / 1_000_000;
                assertThat(cutOff.acquires.get() - acquiresBefore).as("tries in %d ms", waitedMillis)
                    .isLessThanOrEqualTo(2 + (int) (waitedMillis / 150));
            }
            finally {
                theirs.close(); // whatever was seen: lock() below must not wait for ever (it ignores interrupts)
            }
        }, task -> new Thread(task, "release-theirs").start()); // not the common pool, which other work may hold
        lock.lock();
        release.get(10, TimeUnit.SECONDS);
        assertThat(redis.server().command("EXISTS", "lock:{taken-over}")).isEqualTo("1");
        lock.unlock(); // the new lock: released
        assertThat(redis.server().command("EXISTS", "lock:{taken-over}")).isEqualTo("0");
        // the hold of the lost lock, given up when tryLock() was refused, is still reported
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
            .isNotInstanceOf(LockLostException.class);
    }

    @Test
    void aThreadWhoseLockWasLostTakesItAnewWhenFreeAndItsHoldsMoveToTheNewLock() {
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine mine = fixture.engine(cutOff, SHORT_LEASE);
        Lock lock = mine.asLock("lapsed");
        lock.lock();
        lock.lock();
        String lostToken = redis.server().command("GET", "lock:{lapsed}");
        cutOff.failRenewals(true);
        Await.until(Duration.ofSeconds(10), "the key expires", () -> "0".equals(redis.server().command("EXISTS", "lock:{lapsed}")));
        cutOff.failRenewals(false);

        // as RedisLockRegistry does: a new lock, and the thread's unlocks balance as before
        assertThat(lock.tryLock()).isTrue();
        assertThat(redis.server().command("GET", "lock:{lapsed}")).isNotNull().isNotEqualTo(lostToken);
        lock.unlock();
        lock.unlock();
        assertThat(redis.server().command("EXISTS", "lock:{lapsed}")).isEqualTo("1");
        assertThat(fixture.engine().asLock("lapsed").tryLock()).isFalse();
        lock.unlock();
        assertThat(redis.server().command("EXISTS", "lock:{lapsed}")).isEqualTo("0");
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
    }

    @Test
    void aLeaseLostJustAsTheThreadLocksAgainIsNotAnError() {
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine mine = fixture.engine(cutOff, SHORT_LEASE);
        DefaultLockEngine other = fixture.engine(SHORT_LEASE);
        AtomicReference<LockHandle> theirs = new AtomicReference<>();
        AtomicReference<Runnable> beforeNextTry = new AtomicReference<>();
        Lock lock = new ForwardingLockService(mine, beforeNextTry).asLock("raced");
        lock.lock();
        // a first grant on a cold connection may come after the short lease's local estimate: wait for a renewal
        Await.until(Duration.ofSeconds(5), "the lease is known good", () -> mine.heldLocks().get(0).isHeld());
        // the view finds its lock held, and by the time the engine looks it is lost and another instance has it
        beforeNextTry.set(() -> {
            cutOff.failRenewals(true);
            theirs.set(other.lock("raced", Duration.ofSeconds(10)));
            Await.until(Duration.ofSeconds(10), "the loss is reported", () -> !fixture.lost.isEmpty());
        });
        assertThat(lock.tryLock()).isFalse();
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        theirs.get().close();
    }

    @Test
    void conditionsAreNotSupported() {
        Lock lock = fixture.engine().asLock("k");
        assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition)
            .withMessageContaining("condition");
    }

    /** The engine, with a step the test runs just before the next {@code tryLock} reaches it. */
    private record ForwardingLockService(DefaultLockEngine engine, AtomicReference<Runnable> beforeNextTry)
            implements LockService {

        @Override
        public Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime) {
            Runnable step = beforeNextTry.getAndSet(null);
            if (step != null) {
                step.run();
            }
            return engine.tryLock(key, waitTime, leaseTime);
        }

        @Override
        public LockHandle lock(String key, Duration waitTime) {
            return engine.lock(key, waitTime);
        }

        @Override
        public <T> T withLock(String key, Duration waitTime, Supplier<T> action) {
            return engine.withLock(key, waitTime, action);
        }

        @Override
        public boolean isLocked(String key) {
            return engine.isLocked(key);
        }
    }
}
