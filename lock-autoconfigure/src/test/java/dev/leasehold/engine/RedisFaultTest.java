package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.logs.ExpectedLog;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(90)
class RedisFaultTest extends EveryServerEngineTest {

    /** The Jedis path's release listener (Spring Data Redis's container) logs every cut connection at ERROR; here they are cut on purpose. */
    @RegisterExtension
    final ExpectedLog.EachTest cutSubscriptions = ExpectedLog.duringEachTest(ExpectedLog.CUT_SUBSCRIPTIONS);

    @BeforeEach
    void needsAControllableServer() {
        Assumptions.assumeTrue(redis.server().controllable(), "needs a Redis server this test may stop");
    }

    private static LockEngineSettings settings(Duration leaseTime) {
        return EngineFixture.fastSettings().withLeaseTime(leaseTime).withRedisTimeout(Duration.ofMillis(300));
    }

    @Test
    void withRedisDownTryLockGivesUpInTimeAndLockingWorksAgainWhenItIsBack() {
        DefaultLockEngine engine = fixture.engine(settings(Duration.ofSeconds(2)));
        LockHandle before = engine.lock("k", Duration.ZERO);
        before.close();

        redis.server().stop();
        long started = System.nanoTime();
        assertThatThrownBy(() -> engine.tryLock("k", Duration.ofMillis(500), null))
            .isInstanceOf(LockAcquisitionException.class)
            .hasMessageContaining("Redis did not answer")
            .extracting(ex -> ((LockAcquisitionException) ex).getKey()).isEqualTo("k");
        long tookMillis = (System.nanoTime() - started) / 1_000_000;
        // its wait (500 ms) plus leasehold.redis-timeout (300 ms), plus scheduling slack on a busy machine
        assertThat(tookMillis).isLessThan(500 + 300 + 400);

        started = System.nanoTime();
        assertThatThrownBy(() -> engine.tryLock("k", Duration.ZERO, null)).isInstanceOf(LockAcquisitionException.class);
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(300 + 400);

        assertThatThrownBy(() -> engine.isLocked("k")).isInstanceOf(IllegalStateException.class);

        redis.server().start();
        LockHandle after = lockEventually(engine, "k");
        // the counter died with the server, yet tokens keep growing (they never fall below the server clock)
        assertThat(after.fencingToken()).isGreaterThan(before.fencingToken());
        after.close();
        assertThat(engine.isLocked("k")).isFalse();
    }

    @Test
    void aHeldLockWhoseRenewalsFailUntilTheLeaseRunsOutIsReportedLost() {
        DefaultLockEngine engine = fixture.engine(settings(Duration.ofMillis(900)));
        LockHandle handle = engine.lock("outage", Duration.ZERO);
        redis.server().stop();
        Await.until(Duration.ofSeconds(5), "the loss is reported", () -> fixture.lost.size() == 1);
        assertThat(handle.isHeld()).isFalse();
        handle.close(); // with Redis down: must return in time and clean local state
        redis.server().start();
        LockHandle again = lockEventually(engine, "outage");
        again.close();
    }

    @Test
    void anAcquireWhoseReplyWasLostIsCleanedUpAndBlocksNoOne() {
        DefaultLockEngine engine = fixture.engine(settings(Duration.ofSeconds(30)));
        DefaultLockEngine other = fixture.engine(settings(Duration.ofSeconds(30)));
        engine.lock("warm", Duration.ofSeconds(10)).close(); // scripts loaded, connection up

        redis.server().pause(); // the acquire is sent but no reply comes in time
        try {
            assertThatThrownBy(() -> engine.tryLock("ghost", Duration.ZERO, null))
                .isInstanceOf(LockAcquisitionException.class);
        }
        finally {
            redis.server().resume();
        }
        // the server now runs the late acquire and then the compare-and-delete sent after it
        Await.until(Duration.ofSeconds(5), "the orphan grant is gone", () -> !other.isLocked("ghost"));
        Optional<LockHandle> taken = other.tryLock("ghost", Duration.ZERO, null);
        assertThat(taken).isPresent();
        taken.get().close();
    }

    @Test
    void anAcquireWhoseCallerWasInterruptedIsTakenBackAndBlocksNoOne() throws Exception {
        FaultyLockServer slow = new FaultyLockServer(fixture.server("lock:"));
        slow.delayAcquires(Duration.ofMillis(300));
        DefaultLockEngine interrupted = fixture.engine(slow, EngineFixture.fastSettings());
        DefaultLockEngine other = fixture.engine();
        Thread caller = new Thread(() -> {
            try {
                interrupted.tryLock("interrupted", Duration.ofSeconds(1), null);
            }
            catch (LockAcquisitionException expected) {
                // interrupted while its grant was on the way
            }
        });
        caller.start();
        Await.until(Duration.ofSeconds(5), "the grant landed in Redis",
                () -> "1".equals(redis.server().command("EXISTS", "lock:{interrupted}")));
        caller.interrupt();
        caller.join(5000);
        assertThat(other.tryLock("interrupted", Duration.ofSeconds(2), null))
            .as("taken back at once, not after the 30 s lease").isPresent().get().satisfies(LockHandle::close);
    }

    @Test
    void aWaiterWhoseSubscriptionReconnectedLooksAgainInsteadOfSleepingOutTheLease() throws Exception {
        DefaultLockEngine holder = fixture.engine(settings(Duration.ofSeconds(30)));
        DefaultLockEngine waiter = fixture.engine(settings(Duration.ofSeconds(30)));
        // connections up and classes loaded: a cold first call may take longer than the 300 ms Redis timeout
        holder.lock("warm", Duration.ofSeconds(5)).close();
        waiter.lock("warm", Duration.ofSeconds(5)).close();
        // kept in a variable until the end: a dropped handle would be released by the garbage collector
        LockHandle held = holder.tryLock("restart", Duration.ZERO, Duration.ofSeconds(30)).orElseThrow();
        java.util.concurrent.CompletableFuture<Long> acquiredAt = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = waiter.lock("restart", Duration.ofSeconds(25))) {
                return System.nanoTime();
            }
        });
        Await.until(Duration.ofSeconds(5), "the waiter sleeps until a release", () -> waiter.waitingCount() == 1);

        // the server restarts empty: the lock is gone, and no release message was ever sent
        long restartedAt = System.nanoTime();
        redis.server().stop();
        redis.server().start();

        long waitedMillis = (acquiredAt.get(30, java.util.concurrent.TimeUnit.SECONDS) - restartedAt) / 1_000_000;
        // without the re-check on re-subscription it would sleep until the 30 s lease it was told about
        assertThat(waitedMillis).isLessThan(10_000);
        java.lang.ref.Reference.reachabilityFence(held);
    }

    @Test
    void fencingTokensKeepGrowingWhenRedisLosesTheCounter() {
        DefaultLockEngine engine = fixture.engine();
        long previous = 0;
        for (int i = 0; i < 5; i++) {
            try (LockHandle handle = engine.lock("fenced", Duration.ZERO)) {
                assertThat(handle.fencingToken()).isGreaterThan(previous);
                previous = handle.fencingToken();
            }
            redis.server().command("FLUSHALL"); // as after a restart without persistence
        }
        // many grants inside one microsecond-clock tick still count up
        for (int i = 0; i < 50; i++) {
            try (LockHandle handle = engine.lock("fenced", Duration.ZERO)) {
                assertThat(handle.fencingToken()).isGreaterThan(previous);
                previous = handle.fencingToken();
            }
        }
        // nothing piles up per key: the last token lives in the lock's value while it is held, and a counter key,
        // when a release had to write one (tokens ahead of the clock), expires a minute later
        long counterTtl = Long.parseLong(redis.server().command("PTTL", "lock:{fenced}:fence"));
        assertThat(counterTtl).as("no counter key, or one that expires").satisfiesAnyOf(
                ttl -> assertThat(ttl).isEqualTo(-2L), ttl -> assertThat(ttl).isBetween(1L, 60_000L));
    }

    private static LockHandle lockEventually(DefaultLockEngine engine, String key) {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            try {
                return engine.lock(key, Duration.ofSeconds(1));
            }
            catch (LockAcquisitionException ex) {
                if (System.nanoTime() > deadline) {
                    throw ex;
                }
            }
        }
    }
}
