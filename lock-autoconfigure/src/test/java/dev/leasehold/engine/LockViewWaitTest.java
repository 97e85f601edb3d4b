package dev.leasehold.engine;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How {@code asLock(key).lock()} waits: one wait that keeps its place in the queues however long it lasts.
 */
class LockViewWaitTest extends RealRedisEngineTest {

    /** One {@code lock()} call: when it was made and when it returned. */
    record Call(String contender, int round, long startedNanos, long grantedNanos) {

        @Override
        public String toString() {
            return contender + round;
        }
    }

    @Test
    void lockKeepsItsPlaceHoweverLongItWaitsSoNoContenderIsPassedOver() throws Exception {
        // three instances take turns with sections long enough that each waiter waits for two of them; a
        // waiter that left the queues and joined them again at the back (what a wait in slices did) is
        // passed over by a contender that asked after it
        Duration section = Duration.ofMillis(300);
        int rounds = 4;
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        DefaultLockEngine third = fixture.engine();
        List<Call> calls = new CopyOnWriteArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> contenders = new ArrayList<>();
            // a's first turn lasts until b and c both wait (on a loaded machine a thread may start its wait late)
            CountDownLatch othersWait = new CountDownLatch(1);
            contenders.add(threads.submit(() -> takeTurns("a", first.asLock("turns"), rounds, section, calls, othersWait)));
            Await.until(Duration.ofSeconds(10), "a holds the key", () -> !calls.isEmpty());
            contenders.add(threads.submit(() -> takeTurns("b", second.asLock("turns"), rounds, section, calls, null)));
            Await.until(Duration.ofSeconds(10), "b waits", () -> second.waitingCount() == 1);
            contenders.add(threads.submit(() -> takeTurns("c", third.asLock("turns"), rounds, section, calls, null)));
            Await.until(Duration.ofSeconds(10), "c waits", () -> third.waitingCount() == 1);
            othersWait.countDown();
            for (Future<?> contender : contenders) {
                contender.get(60, TimeUnit.SECONDS);
            }
        }
        finally {
            threads.shutdownNow();
        }
        List<Call> byRequest = new ArrayList<>(calls);
        byRequest.sort(Comparator.comparingLong(Call::startedNanos));
        List<Call> byGrant = new ArrayList<>(calls);
        byGrant.sort(Comparator.comparingLong(Call::grantedNanos));
        assertThat(byGrant).as("turns in the order they were asked for").hasSize(3 * rounds).isEqualTo(byRequest);
        assertThat(redis.server().command("EXISTS", "lock:{turns}")).isEqualTo("0");
    }

    @Test
    void aWaitWithoutATimeLimitIsAcceptedBlockingAndAsync() throws Exception {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine waiter = fixture.engine();
        LockHandle held = holder.lock("forever", Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> async = waiter.tryLockAsync("forever", forever, null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(10), "the async wait sleeps", () -> waiter.waitingCount() == 1);
        CompletableFuture<Optional<LockHandle>> blocking = CompletableFuture
            .supplyAsync(() -> waiter.tryLock("forever", forever, null));
        held.close();
        // served in turn, whichever came first; each only once the other closed
        Await.until(Duration.ofSeconds(10), "one wait ends", () -> async.isDone() || blocking.isDone());
        CompletableFuture<Optional<LockHandle>> second = async.isDone() ? blocking : async;
        LockHandle first = (async.isDone() ? async : blocking).get().orElseThrow();
        assertThat(second).isNotDone();
        first.close();
        LockHandle next = second.get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
        next.close();
        assertThat(redis.server().command("EXISTS", "lock:{forever}")).isEqualTo("0");
    }

    @Test
    void lockGivesUpWhenRedisCannotBeReachedForAWholeLease() {
        Duration lease = Duration.ofMillis(1500);
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine engine = fixture.engine(cutOff, EngineFixture.fastSettings().withLeaseTime(lease));
        Lock lock = engine.asLock("unreachable");
        cutOff.failAcquires(true);
        long started = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(lock::lock)
            .withMessageContaining("'unreachable'")
            .withMessageContaining("whole lease");
        long waitedMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(waitedMillis).isBetween(lease.toMillis(), lease.toMillis() + 5000);
        assertThat(engine.localGateCount()).isZero();
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);

        cutOff.failAcquires(false);
        lock.lock();
        assertThat(redis.server().command("EXISTS", "lock:{unreachable}")).isEqualTo("1");
        lock.unlock();
    }

    @Test
    void lockWaitsThroughAnOutageShorterThanALease() throws Exception {
        FaultyLockServer cutOff = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine waiterEngine = fixture.engine(cutOff, EngineFixture.fastSettings());
        Lock held = fixture.engine().asLock("outage");
        Lock waiting = waiterEngine.asLock("outage");
        held.lock();
        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
            waiting.lock();
            waiting.unlock();
        });
        Await.until(Duration.ofSeconds(10), "the waiter sleeps", () -> waiterEngine.waitingCount() == 1);
        cutOff.failAcquires(true);
        int before = cutOff.acquires.get();
        held.unlock(); // its tries now fail until Redis answers again
        Await.until(Duration.ofSeconds(10), "the waiter's tries fail", () -> cutOff.acquires.get() >= before + 3);
        cutOff.failAcquires(false);
        waiter.get(15, TimeUnit.SECONDS);
        assertThat(redis.server().command("EXISTS", "lock:{outage}")).isEqualTo("0");
    }

    /** Locks, holds for the section (the work), unlocks and at once asks again, {@code rounds} times. */
    private static Void takeTurns(String contender, Lock lock, int rounds, Duration section, List<Call> calls,
            CountDownLatch firstTurnEnds) throws InterruptedException {
        for (int round = 1; round <= rounds; round++) {
            long started = System.nanoTime();
            lock.lock();
            try {
                calls.add(new Call(contender, round, started, System.nanoTime()));
                Thread.sleep(section.toMillis()); // the critical section's work
                if (round == 1 && firstTurnEnds != null && !firstTurnEnds.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the others did not start waiting");
                }
            }
            finally {
                lock.unlock();
            }
        }
        return null;
    }
}
