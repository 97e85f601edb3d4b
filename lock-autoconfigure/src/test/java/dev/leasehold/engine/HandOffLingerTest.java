package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A thread releasing a lock that other threads of its JVM used in this turn, with none of them waiting yet, waits up
 * to the linger for one to come back ({@code leasehold.hand-off.linger}) instead of sending the key round through
 * Redis; a release nobody comes back for, an interrupted thread and a closing engine are not held up by it. Long
 * lingers here, so a test decides the timing, not the machine.
 */
class HandOffLingerTest extends EveryServerEngineTest {

    private static LockEngineSettings lingering(Duration linger) {
        // a long lease and turn check: no renewal or token reservation runs inside a test
        return EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(30))
            .withHandOff(new LockEngineSettings.HandOff(64, Duration.ofSeconds(30), linger));
    }

    @Test
    void aThreadComingBackWithinTheLingerGetsTheLockHandedWithoutRedis() throws Exception {
        DefaultLockEngine engine = fixture.engine(lingering(Duration.ofSeconds(10)));
        Turns turns = Turns.begin(engine, "linger");
        long before = scriptCalls();
        CompletableFuture<Long> released = turns.releaseSecond(); // nobody waits: its release lingers
        Await.until(Duration.ofSeconds(5), "the release lingers", turns::lingering);
        long comingBack = System.nanoTime();
        LockHandle again = engine.lock("linger", Duration.ofSeconds(5)); // the first thread comes back
        assertThat(again.fencingToken()).isGreaterThan(turns.second.join().fencingToken());
        assertThat(released.get(5, TimeUnit.SECONDS)).as("the release ended when the thread came back")
            .isGreaterThanOrEqualTo(comingBack);
        assertThat(scriptCalls() - before).as("Redis calls for the release and the next acquisition").isZero();
        // (its own release would linger the whole 10 s: the engine's close releases it)
    }

    @Test
    void aReleaseNobodyComesBackForGoesThroughRedisOnceTheLingerIsOver() throws Exception {
        Duration linger = Duration.ofMillis(300);
        DefaultLockEngine engine = fixture.engine(lingering(linger));
        Turns turns = Turns.begin(engine, "alone");
        long started = System.nanoTime();
        long ended = turns.releaseSecond().get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(ended - started)).isBetween(linger.minusMillis(50), Duration.ofSeconds(5));
        assertThat(lockKeyExists("alone")).as("released in Redis").isFalse();
        assertThat(fixture.engine().tryLock("alone", Duration.ofSeconds(5), null)).isPresent();
    }

    @Test
    void anInterruptedThreadDoesNotLinger() throws Exception {
        DefaultLockEngine engine = fixture.engine(lingering(Duration.ofSeconds(20)));
        Turns turns = Turns.begin(engine, "interrupted");
        long started = System.nanoTime();
        long ended = turns.releaseSecond(true).get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(ended - started)).isLessThan(Duration.ofSeconds(5));
        Await.until(Duration.ofSeconds(5), "released in Redis", () -> !lockKeyExists("interrupted"));
    }

    @Test
    void closingTheEngineEndsALingerAndReleasesTheKey() throws Exception {
        DefaultLockEngine engine = fixture.engine(lingering(Duration.ofSeconds(20)));
        Turns turns = Turns.begin(engine, "closing");
        CompletableFuture<Long> released = turns.releaseSecond();
        Await.until(Duration.ofSeconds(5), "the release lingers", turns::lingering);
        long closing = System.nanoTime();
        engine.close();
        long ended = released.get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(ended - closing)).isLessThan(Duration.ofSeconds(5));
        assertThat(lockKeyExists("closing")).as("released in Redis before close() returned").isFalse();
    }

    /**
     * Two threads' turn on a key: this thread takes it, a second thread queues, this one hands it over and does not
     * come back; the second thread holds it until told to release.
     */
    private record Turns(CompletableFuture<LockHandle> second, CountDownLatch release, CompletableFuture<Long> releasedAt,
            boolean[] interrupt, Thread[] thread) {

        static Turns begin(DefaultLockEngine engine, String key) throws Exception {
            engine.lock("warm-up", Duration.ofSeconds(5)).close();
            Turns turns = new Turns(new CompletableFuture<>(), new CountDownLatch(1), new CompletableFuture<>(),
                    new boolean[1], new Thread[1]);
            LockHandle first = engine.lock(key, Duration.ofSeconds(5));
            Thread thread = new Thread(() -> turns.holdThenRelease(engine, key), "second-holder");
            thread.setDaemon(true);
            turns.thread[0] = thread;
            thread.start();
            Await.until(Duration.ofSeconds(5), "the second thread waits", () -> engine.locallyQueuedCount() == 1);
            first.close(); // handed to the waiting thread
            turns.second.get(5, TimeUnit.SECONDS);
            return turns;
        }

        private void holdThenRelease(DefaultLockEngine engine, String key) {
            try {
                LockHandle handle = engine.lock(key, Duration.ofSeconds(5));
                second.complete(handle);
                release.await();
                if (interrupt[0]) {
                    Thread.currentThread().interrupt();
                }
                handle.close();
                releasedAt.complete(System.nanoTime());
            }
            catch (Throwable ex) {
                second.completeExceptionally(ex);
                releasedAt.completeExceptionally(ex);
            }
        }

        /** Whether the second thread waits inside its release (parked in the key's line). */
        boolean lingering() {
            Thread holder = thread[0];
            return holder.getState() == Thread.State.TIMED_WAITING && java.util.Arrays.stream(holder.getStackTrace())
                .anyMatch(frame -> frame.getClassName().endsWith("key.KeyLine") && frame.getMethodName().equals("release"));
        }

        /** Tells the second thread to release; completes with the time its release returned. */
        CompletableFuture<Long> releaseSecond() {
            return releaseSecond(false);
        }

        CompletableFuture<Long> releaseSecond(boolean interrupted) {
            interrupt[0] = interrupted;
            release.countDown();
            return releasedAt;
        }
    }
}
