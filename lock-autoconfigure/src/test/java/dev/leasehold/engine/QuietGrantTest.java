package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.redis.ScriptedLockServer;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An uncontended grant is quiet ({@code owner.lua}): its value says that its token is the clock and that nobody
 * queued, so its release runs neither {@code TIME} nor the queue's {@code EXISTS}. What that must not cost: a waiter
 * of another instance that queues while such a grant holds the key is woken by the release, not at its next
 * re-check; and tokens stay strictly increasing from one holder to the next.
 */
class QuietGrantTest extends EveryServerEngineTest {

    /** Waiters re-check only every 10 s: a wake-up the release forgot shows as a wait of seconds. */
    private static final FairQueue SLOW_RECHECK = new FairQueue(Duration.ofSeconds(30), Duration.ofSeconds(20),
            Duration.ofSeconds(10), FairQueue.DEFAULTS.tokenBlock());

    @Test
    void aWaiterThatQueuedBehindAQuietGrantIsWokenByItsRelease() throws Exception {
        LockEngineSettings settings = EngineFixture.fastSettings().withFairQueue(SLOW_RECHECK);
        DefaultLockEngine holder = fixture.engine(settings);
        DefaultLockEngine other = fixture.engine(
                ((ScriptedLockServer) fixture.server("lock:")).fairQueue(SLOW_RECHECK), settings);
        LockHandle held = holder.lock("quiet", Duration.ZERO);
        String lockKey = LockKeys.of("lock:", "quiet").lock();
        assertThat(redis.server().command("GET", lockKey)).as("an uncontended grant's value").contains("#");

        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<LockHandle> waiter = pool.submit(() -> other.lock("quiet", Duration.ofSeconds(30)));
        Await.until(Duration.ofSeconds(10), "the other instance queued in Redis and asleep until a wake-up",
                () -> !"0".equals(redis.server().command("ZCARD", LockKeys.of("lock:", "quiet").queue()).trim())
                        && other.waitingCount() == 1);
        assertThat(redis.server().command("GET", lockKey)).as("the holder's value once someone queued")
            .doesNotContain("#").contains("@");

        long releasedAt = System.nanoTime();
        held.close();
        LockHandle next = waiter.get(20, TimeUnit.SECONDS);
        long waitedMillis = (System.nanoTime() - releasedAt) / 1_000_000;
        pool.shutdown();
        // woken by the release (a queue grant and its message): milliseconds; at its re-check it would be 10 s
        assertThat(waitedMillis).as("ms from the release to the queued waiter's lock").isLessThan(3_000);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        next.close();
    }

    @Test
    void aQuietReleaseLeavesNothingAndTheNextTokenIsHigher() {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        LockKeys keys = LockKeys.of("lock:", "cycle");
        long previous = 0;
        for (int i = 0; i < 200; i++) {
            try (LockHandle handle = (i % 2 == 0 ? first : second).lock("cycle", Duration.ZERO)) {
                assertThat(handle.fencingToken()).as("token of cycle " + i).isGreaterThan(previous);
                previous = handle.fencingToken();
            }
        }
        assertThat(lockKeyExists("cycle")).isFalse();
        assertThat(redis.server().command("EXISTS", keys.fence()).trim()).as("a counter key").isEqualTo("0");
    }
}
