package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the watchdog's rounds: when a round is sent and how much of it is on its way at once. (What a
 * renewal's answer means for its lock is {@link LeaseAndWatchdogTest}'s.)
 */
class RenewalRoundsTest extends EveryServerEngineTest {

    /**
     * A tick sends its renewals and ends; it does not wait for their answers before the next tick's delay starts.
     * Before, a tick waited for its answers (up to leasehold.redis-timeout), so on a Redis slow to answer a lock was
     * renewed every third of the lease plus that wait: with a million held locks, every 5.3 s on a 10 s lease, and
     * a third of them were lost.
     */
    @Test
    void aTickDoesNotWaitForItsAnswersBeforeTheNext() {
        Duration leaseTime = Duration.ofMillis(1800);
        long tickMillis = leaseTime.toMillis() / 3;
        List<Long> sentAt = new CopyOnWriteArrayList<>();
        ForwardingLockServer slow = new ForwardingLockServer(fixture.server("lock:")) {
            @Override
            public List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
                sentAt.add(System.nanoTime());
                // Redis renews now; its answer reaches the client 400 ms later (the timeout is 200 ms)
                Executor late = CompletableFuture.delayedExecutor(400,
                        TimeUnit.MILLISECONDS);
                return real.renewAll(renewals).stream().map(answer -> answer.thenApplyAsync(value -> value, late)).toList();
            }
        };
        LockEngineSettings settings = new LockEngineSettings("lock:", leaseTime, Duration.ofMillis(200), Duration.ofMillis(200));
        DefaultLockEngine holder = fixture.engine(slow, settings);
        try (LockHandle handle = holder.lock("slow-answers", Duration.ZERO)) {
            keepsHolding(handle, leaseTime, 4);
        }
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < sentAt.size(); i++) {
            gaps.add((sentAt.get(i) - sentAt.get(i - 1)) / 1_000_000L);
        }
        Collections.sort(gaps);
        assertThat(gaps).as("ms between renewal rounds").hasSizeGreaterThanOrEqualTo(6);
        // a tick that waited for its answers (up to the timeout) would start every 200 + 600 ms
        assertThat(gaps.get(gaps.size() / 2)).as("median ms between renewal rounds (tick %d ms)", tickMillis)
                .isLessThan(tickMillis + 100);
    }

    /**
     * A round is sent in chunks, with at most a window of renewals on their way: a million renewals queued in Redis
     * at once made every acquire behind them wait seconds (and time out), so the round waits for answers before it
     * sends more. Every lock is still renewed each tick.
     */
    @Test
    void aRoundKeepsAtMostAWindowOfRenewalsOnTheirWay() {
        Duration leaseTime = Duration.ofMillis(3000);
        int locks = 3_500; // four chunks against a window of two
        AtomicInteger onTheirWay = new AtomicInteger();
        AtomicInteger mostOnTheirWay = new AtomicInteger();
        AtomicInteger largestCall = new AtomicInteger();
        AtomicInteger renewalsSent = new AtomicInteger();
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        ForwardingLockServer slow = new ForwardingLockServer(fixture.server("lock:")) {
            @Override
            public List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
                renewalsSent.addAndGet(renewals.size());
                largestCall.accumulateAndGet(renewals.size(), Math::max);
                mostOnTheirWay.accumulateAndGet(onTheirWay.addAndGet(renewals.size()), Math::max);
                // a call's answers reach the client 100 ms late: a round of 3,500 cannot be on its way all at once
                // unless nothing holds it back
                List<CompletableFuture<Boolean>> real = this.real.renewAll(renewals);
                List<CompletableFuture<Boolean>> answers = real.stream().map(each -> new CompletableFuture<Boolean>()).toList();
                CompletableFuture.allOf(real.toArray(CompletableFuture[]::new)).whenComplete((done, error) ->
                    later.schedule(() -> {
                        onTheirWay.addAndGet(-renewals.size());
                        for (int i = 0; i < answers.size(); i++) {
                            CompletableFuture<Boolean> answer = answers.get(i);
                            real.get(i).whenComplete((renewed, failure) -> {
                                if (failure != null) {
                                    answer.completeExceptionally(failure);
                                }
                                else {
                                    answer.complete(renewed);
                                }
                            });
                        }
                    }, 100, TimeUnit.MILLISECONDS));
                return answers;
            }
        };
        LockEngineSettings settings = new LockEngineSettings("lock:", leaseTime, Duration.ofMillis(200), Duration.ofMillis(2000));
        DefaultLockEngine holder = fixture.engine(slow, settings);
        List<LockHandle> handles = new ArrayList<>(locks);
        try {
            for (int i = 0; i < locks; i++) {
                handles.add(holder.lock("window-" + i, Duration.ZERO));
            }
            long until = System.nanoTime() + leaseTime.multipliedBy(2).toNanos();
            Await.until(leaseTime.multipliedBy(4), "two leases passed",
                    () -> System.nanoTime() - until > 0 || !fixture.lost.isEmpty());
            assertThat(fixture.lost).as("locks reported lost").isEmpty();
            assertThat(handles).allMatch(LockHandle::isHeld);
            assertThat(renewalsSent.get()).as("renewals sent in two leases").isGreaterThanOrEqualTo(4 * locks);
            assertThat(largestCall.get()).as("renewals in one call").isLessThanOrEqualTo(1_000);
            assertThat(mostOnTheirWay.get()).as("renewals on their way at once").isBetween(1_000, 2_000);
        }
        finally {
            handles.forEach(LockHandle::close);
            later.shutdownNow();
        }
    }

    /**
     * A tick that throws ends a fixed-delay schedule for good: a server that cannot tell how many renewals to send
     * at once (a Cluster client whose factory is stopping) must not stop the watchdog.
     */
    @Test
    void aServerThatCannotTellItsBatchSizeDoesNotStopTheWatchdog() {
        AtomicInteger asked = new AtomicInteger();
        ForwardingLockServer unsure = new ForwardingLockServer(fixture.server("lock:")) {
            @Override
            public int renewalsPerCall() {
                if (asked.incrementAndGet() <= 2) {
                    throw new IllegalStateException("the connection factory is stopping");
                }
                return super.renewalsPerCall();
            }
        };
        Duration leaseTime = Duration.ofMillis(900);
        DefaultLockEngine engine = fixture.engine(unsure,
                new LockEngineSettings("lock:", leaseTime, Duration.ofMillis(200), Duration.ofMillis(2000)));
        LockHandle handle = engine.lock("unsure", Duration.ZERO);
        long until = System.nanoTime() + leaseTime.multipliedBy(3).toNanos();
        Await.until(leaseTime.multipliedBy(6), "three leases", () -> System.nanoTime() - until > 0 || !fixture.lost.isEmpty());
        assertThat(fixture.lost).as("locks reported lost").isEmpty();
        assertThat(handle.isHeld()).isTrue();
        assertThat(asked.get()).as("rounds that asked").isGreaterThan(3);
        handle.close();
    }
}
