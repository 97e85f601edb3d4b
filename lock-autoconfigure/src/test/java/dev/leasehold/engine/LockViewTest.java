package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code LockService.asLock(key)}: the {@link Lock} contract across two clients on a real Redis. */
class LockViewTest extends RealRedisEngineTest {

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
        assertThat(redis.server().command("EXISTS", "lock:{busy}")).isEqualTo("0");
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
    void conditionsAreNotSupported() {
        Lock lock = fixture.engine().asLock("k");
        assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition)
            .withMessageContaining("condition");
    }
}
