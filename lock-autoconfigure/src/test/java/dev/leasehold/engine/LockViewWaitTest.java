package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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
            contenders.add(threads.submit(() -> takeTurns("a", first.asLock("turns"), rounds, section, calls)));
            Await.until(Duration.ofSeconds(10), "a holds the key", () -> !calls.isEmpty());
            contenders.add(threads.submit(() -> takeTurns("b", second.asLock("turns"), rounds, section, calls)));
            Await.until(Duration.ofSeconds(10), "b waits", () -> second.waitingCount() == 1);
            contenders.add(threads.submit(() -> takeTurns("c", third.asLock("turns"), rounds, section, calls)));
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

    /** Locks, holds for the section (the work), unlocks and at once asks again, {@code rounds} times. */
    private static Void takeTurns(String contender, Lock lock, int rounds, Duration section, List<Call> calls)
            throws InterruptedException {
        for (int round = 1; round <= rounds; round++) {
            long started = System.nanoTime();
            lock.lock();
            try {
                calls.add(new Call(contender, round, started, System.nanoTime()));
                Thread.sleep(section.toMillis()); // the critical section's work
            }
            finally {
                lock.unlock();
            }
        }
        return null;
    }
}
