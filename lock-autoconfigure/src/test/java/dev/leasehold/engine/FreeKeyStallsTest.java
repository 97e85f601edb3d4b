package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two ways the fair queue's head slept while the key stood free, found by the campaign judging its L1 rule at
 * 250 ms (seed 7101, Redis MONITOR beside it): a release granted the key to an instance that could not claim it.
 * <ol>
 * <li>The engine opened its subscription connection at the first refused try: a release published while that
 * connection was still connecting (hundreds of ms on a loaded machine) went unseen, and the grant it made waited
 * until the subscription was confirmed (650 ms free).</li>
 * <li>{@code close()} returned before a blocking caller's acquisition had ended: that caller's steps run on its own
 * thread, which withdraws the instance's queue entry when it runs after the wake-up. A restarted instance left its
 * entry behind, a release granted the key to it, and the others waited out the claim timeout (1.7 s free).</li>
 * <li>A holder whose lease ran out in Redis before it released (a section slower than its fixed lease): no release
 * woke the queue's head, which slept on what it saw at its last try (another holder, or its place behind one) up to
 * its next look, beside a free key (300 to 600 ms). The late release, refused as not owned, now tells the head to
 * look again.</li>
 * </ol>
 */
class FreeKeyStallsTest extends RealRedisEngineTest {

    @Test
    void theFirstCallThatMayWaitOpensTheSubscriptionConnectionBeforeAnyTryIsRefused() {
        DefaultLockEngine engine = fixture.engine();
        assertThat(keepAliveSubscribers()).as("before any call").isZero();

        engine.tryLock("first-wait", Duration.ofSeconds(5), null).orElseThrow().close();

        // granted at once, never refused: yet the connection release messages come on is open (and subscribed to
        // its keep-alive channel) for the first wait that needs it; without the fix it opened only at a refusal
        Await.until(Duration.ofSeconds(5), "the subscription connection is open", () -> keepAliveSubscribers() == 1);
        assertThat(engine.subscribedChannelCount()).as("channels of waiters: nobody waited").isZero();
    }

    @Test
    void aZeroWaitCallOpensNoSubscriptionConnection() {
        DefaultLockEngine engine = fixture.engine();
        engine.tryLock("no-wait", Duration.ZERO, null).orElseThrow().close();
        engine.tryLock("no-wait", Duration.ZERO, null).orElseThrow().close();
        assertThat(keepAliveSubscribers()).isZero();
    }

    @Test
    void closeReturnsOnlyOnceBlockedCallersWithdrewTheInstanceFromTheQueue() throws Exception {
        String key = "close-withdraws";
        DefaultLockEngine holder = fixture.engine();
        LockHandle held = holder.lock(key, Duration.ZERO);
        CountDownLatch withdrawing = new CountDownLatch(1);
        CountDownLatch looked = new CountDownLatch(1);
        // the caller's thread is descheduled right where it withdraws (after close() woke it): until the test looked
        // at the queue, or 1.6 s (within the Redis timeout of 5 s that close() waits for callers at most; with 500 ms,
        // and once with 2 s in a CI run at a load of 6, callers not scheduled for that long had not reached their
        // withdrawal yet: close() then returns at its bound, and the test cannot judge)
        LockServer slowWithdrawals = fixture.track(new ForwardingLockServer(fixture.server("lock:")) {
            @Override
            public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
                withdrawing.countDown();
                try {
                    looked.await(1600, TimeUnit.MILLISECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                return real.withdraw(keys, waiterId);
            }
        });
        Duration closeBound = Duration.ofSeconds(5); // close() waits for blocked callers at most the Redis timeout
        DefaultLockEngine engine = fixture.engine(slowWithdrawals, EngineFixture.fastSettings().withRedisTimeout(closeBound));
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread caller = new Thread(() -> {
                try {
                    engine.tryLock(key, Duration.ofSeconds(30), null).ifPresent(LockHandle::close);
                }
                catch (RuntimeException ex) {
                    // "shutting down": what a caller waiting at close() is told
                }
            }, "blocked-caller-" + i);
            caller.start();
            callers.add(caller);
        }
        Await.until(Duration.ofSeconds(5), "the instance queued for the key",
                () -> queued(key).contains(engine.instanceId() + "|W"));

        long closing = System.nanoTime();
        engine.close();
        long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);
        List<String> queuedAfterClose = queued(key);
        boolean withdrewBeforeCloseReturned = withdrawing.getCount() == 0;
        looked.countDown();

        for (Thread caller : callers) {
            caller.join(TimeUnit.SECONDS.toMillis(5));
            assertThat(caller.isAlive()).as(caller.getName() + " ended, at " + List.of(caller.getStackTrace())).isFalse();
        }
        held.close();
        if (!withdrewBeforeCloseReturned && closeMillis >= closeBound.toMillis()) {
            // close() returned at its bound, the Redis timeout: a caller that did not reach its withdrawal within it
            // (twice in CI and once in 30 runs beside six busy threads on two cores, each time the class's first
            // test in a fresh JVM; the test took 3.4 s longer than its passing runs, so close() waited the whole
            // 5 s) withdraws after close() returned, which is the documented bound, not FS2: with the FS2 fix
            // reverted close() returns at once, and the assertions below fail
            Assumptions.abort("close() returned at its bound (" + closeMillis + " ms), before any caller ran");
        }
        assertThat(withdrewBeforeCloseReturned).as("a caller withdrew before close() returned (after " + closeMillis
                + " ms)").isTrue();
        assertThat(queuedAfterClose).as("the queue once close() returned: nothing of the closed instance").isEmpty();
    }

    @Test
    void aReleaseThatComesAfterItsLeaseRanOutWakesTheHeadOfTheQueue() throws Exception {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine slow = fixture.engine();
        DefaultLockEngine next = fixture.engine();
        // the next waiter's own periodic look may land right at the lease's end (a loaded machine): then there is no
        // stall to show, and the scenario runs again on a fresh key
        for (int attempt = 1; attempt <= 3; attempt++) {
            if (lateReleaseWakesTheHead("late-release-" + attempt, first, slow, next)) {
                return;
            }
        }
        Assumptions.abort("the next waiter looked again by itself first, 3 times out of 3");
    }

    /** False when the next waiter took the key by itself before the late release (nothing judged). */
    private boolean lateReleaseWakesTheHead(String key, DefaultLockEngine first, DefaultLockEngine slow,
            DefaultLockEngine next) throws Exception {
        LockHandle held = first.lock(key, Duration.ZERO);
        // the slow section queues first, the next waiter behind it
        CompletableFuture<java.util.Optional<LockHandle>> slowGot = slow.tryLockAsync(key, Duration.ofSeconds(20),
                Duration.ofMillis(200)).toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "the slow section queued", () -> queued(key).contains(slow.instanceId() + "|W"));
        CompletableFuture<java.util.Optional<LockHandle>> nextGot = next.tryLockAsync(key, Duration.ofSeconds(20), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "the next waiter queued behind it",
                () -> queued(key).equals(List.of(slow.instanceId() + "|W", next.instanceId() + "|W")));
        held.close();
        LockHandle slowHandle = slowGot.get(5, TimeUnit.SECONDS).orElseThrow();
        // its fixed lease of 200 ms runs out in Redis while the section goes on
        Await.until(Duration.ofSeconds(5), "the slow section's lease ran out in Redis",
                () -> !lockKeyExists(key) || nextGot.isDone());
        if (nextGot.isDone()) {
            slowHandle.close();
            nextGot.get(10, TimeUnit.SECONDS).ifPresent(LockHandle::close);
            return false;
        }
        long releasedAt = System.nanoTime();
        slowHandle.close(); // refused by Redis (not owned any more): the slow section is told it lost the lock
        LockHandle nextHandle = nextGot.get(10, TimeUnit.SECONDS).orElseThrow();
        long tookMillis = (System.nanoTime() - releasedAt) / 1_000_000;
        // woken by the late release; without it, at its own next look (a second or more after its last try)
        assertThat(tookMillis).as("ms from the late release to the next waiter's grant").isLessThan(400);
        assertThat(slowHandle.wasLost()).as("the slow section was told").isTrue();
        nextHandle.close();
        return true;
    }

    private List<String> queued(String key) {
        String members = redis.server().command("ZRANGE", LockKeys.of("lock:", key).queue(), "0", "-1"); // "[a, b]"
        String inside = members.substring(1, members.length() - 1);
        return inside.isBlank() ? List.of() : List.of(inside.split(", "));
    }

    /** Connections subscribed to the engine's keep-alive channel (its subscription connection, once open). */
    private long keepAliveSubscribers() {
        String reply = redis.server().command("PUBSUB", "NUMSUB", "lock:leasehold:subscription"); // "[name, n]"
        return Long.parseLong(reply.substring(reply.lastIndexOf(", ") + 2, reply.length() - 1).trim());
    }
}
