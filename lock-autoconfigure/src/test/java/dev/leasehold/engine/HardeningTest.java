package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Edge paths an outside review broke: each test failed before its fix. */
@Timeout(120)
class HardeningTest extends EveryServerEngineTest {

    private static LockEngineSettings settings(Duration redisTimeout) {
        return EngineFixture.fastSettings().withRedisTimeout(redisTimeout);
    }

    @Test
    void aWriterThatGivesUpStopsKeepingReadersOut() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle reader = fixture.engine().tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow();
        DefaultLockEngine readers = fixture.engine(); // other clients' new readers
        Thread writer = new Thread(() -> {
            try {
                engine.tryLock("catalog", LockMode.WRITE, Duration.ofSeconds(30), null);
            }
            catch (LockAcquisitionException expected) {
                // interrupted
            }
        });
        writer.start();
        // waiting writers queue (a writer-waiting mark where the server does not queue): either keeps readers out
        Await.until(Duration.ofSeconds(5), "the writer marked itself waiting",
                () -> !"0".equals(redis.server().command("EXISTS", "lock:{catalog}:writer-waiting", "lock:{catalog}:queue")));
        assertThat(readers.tryLock("catalog", LockMode.READ, Duration.ZERO, null)).as("a waiting writer keeps new readers out")
            .isEmpty();
        writer.interrupt();
        writer.join(5000);
        // before the fix, new readers were refused for the rest of the writer's 30 s wait
        long started = System.nanoTime();
        Await.until(Duration.ofSeconds(10), "a new reader gets in", () -> {
            Optional<LockHandle> another = readers.tryLock("catalog", LockMode.READ, Duration.ZERO, null);
            another.ifPresent(LockHandle::close);
            return another.isPresent();
        });
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(10_000);
        reader.close();
    }

    @Test
    void aTimedOutAcquireIsTakenBackAfterItsLateEvalWhenRedisLostItsScripts() {
        Assumptions.assumeTrue(redis.server().controllable(), "needs a Redis server this test may pause");
        DefaultLockEngine engine = fixture.engine(settings(Duration.ofMillis(300)));
        DefaultLockEngine other = fixture.engine();
        engine.lock("warm", Duration.ofSeconds(10)).close(); // connected, scripts loaded
        redis.server().command("SCRIPT", "FLUSH"); // as after a restart or failover
        // the release script is cached again (another client used it), the acquire script is not: the take-back
        // runs at once, while the acquire waits for its NOSCRIPT reply before its EVAL is even sent
        redis.server().command("SCRIPT", "LOAD", dev.leasehold.engine.redis.ScriptSource.withQueue("release_exclusive"));

        redis.server().pause(); // EVALSHA queued; NOSCRIPT, then the EVAL, only come after the take-back timeout
        try {
            assertThatThrownBy(() -> engine.tryLock("scripts", Duration.ZERO, null))
                .isInstanceOf(LockAcquisitionException.class);
        }
        finally {
            redis.server().resume();
        }
        // the holder's lease would be 30 s: the late EVAL's grant must be taken back right after it ran
        assertThat(other.tryLock("scripts", Duration.ofSeconds(10), null)).as("free again within seconds")
            .isPresent().get().satisfies(LockHandle::close);
    }

    @Test
    void anAcquireThatTheDriverTimedOutIsTakenBack() {
        Assumptions.assumeTrue(redis.server().controllable(), "needs a Redis server this test may pause");
        // spring.data.redis.timeout (200 ms) shorter than leasehold.redis-timeout (2 s), as is common
        RedisConnectionFactory shortTimeout = fixture.connectionFactory(Duration.ofMillis(200), null, null);
        LockEngineSettings engineSettings = settings(Duration.ofSeconds(2));
        DefaultLockEngine engine = fixture.engine(fixture.server(shortTimeout, "lock:"), engineSettings);
        DefaultLockEngine other = fixture.engine();
        engine.lock("warm", Duration.ofSeconds(10)).close(); // connected, scripts loaded

        redis.server().pause();
        try {
            assertThatThrownBy(() -> engine.tryLock("driver", Duration.ZERO, null))
                .isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("Redis did not answer");
        }
        finally {
            redis.server().resume();
        }
        assertThat(other.tryLock("driver", Duration.ofSeconds(10), null)).as("free again within seconds, not a 30 s lease")
            .isPresent().get().satisfies(LockHandle::close);
    }

    @Test
    void anExpiredFixedLeaseLetsTheNextThreadOfTheSameJvmIn() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle expiring = engine.tryLock("fixed", Duration.ZERO, Duration.ofMillis(500)).orElseThrow();
        long started = System.nanoTime();
        LockHandle next = CompletableFuture.supplyAsync(() -> engine.lock("fixed", Duration.ofSeconds(30)))
            .get(40, TimeUnit.SECONDS);
        long tookMillis = (System.nanoTime() - started) / 1_000_000;
        // before the fix: until the expired holder closed (here: never within the wait)
        assertThat(tookMillis).isLessThan(10_000);
        assertThat(expiring.isHeld()).isFalse();
        assertThat(fixture.lost).hasSize(1);

        expiring.close(); // late: must neither release the new holder's lock nor let a third thread in
        assertThat(next.isHeld()).isTrue();
        assertThat(engine.isLocked("fixed")).isTrue();
        assertThat(CompletableFuture.supplyAsync(() -> engine.tryLock("fixed", Duration.ofMillis(200), null))
            .get(5, TimeUnit.SECONDS)).as("one local holder at a time").isEmpty();
        next.close();
        assertThat(engine.isLocked("fixed")).isFalse();
    }

    @Test
    void closingAHandleFromAnotherThreadWhileItsOwnerReentersNeverGivesAStaleHandle() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 2000; round++) {
                LockHandle outer = engine.lock("race", Duration.ofSeconds(5));
                Future<?> closed = closer.submit(outer::close);
                try (LockHandle inner = engine.lock("race", Duration.ofSeconds(5))) {
                    assertThat(inner.isHeld()).as("round %d", round).isTrue();
                    assertThat(inner.fencingToken()).isGreaterThanOrEqualTo(outer.fencingToken());
                }
                closed.get(5, TimeUnit.SECONDS);
            }
        }
        finally {
            closer.shutdownNow();
        }
        assertThat(engine.isLocked("race")).isFalse();
        assertThat(engine.heldLockCount()).isZero();
    }

    @Test
    void aWaiterBehindALeaseThatJustEndsGetsTheKeyAtOnceNotAtItsDeadline() {
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine waiter = fixture.engine();
        List<Long> waits = new ArrayList<>();
        for (int round = 0; round < 100; round++) {
            String key = "ttl-" + round;
            LockHandle crashed = holder.tryLock(key, Duration.ZERO, Duration.ofMillis(40)).orElseThrow();
            long started = System.nanoTime();
            LockHandle next = waiter.tryLock(key, Duration.ofSeconds(10), null).orElseThrow();
            waits.add((System.nanoTime() - started) / 1_000_000);
            next.close();
            crashed.close();
        }
        waits.sort(null);
        // before the fix, a retry that landed in the holder's last millisecond slept to the 10 s deadline
        assertThat(waits.get(waits.size() - 1)).as("slowest of %s", waits).isLessThan(5000);
    }

    @Test
    void errorsSayWhatHappened() throws Exception {
        RedisConnectionFactory factory = fixture.connectionFactory();
        DefaultLockEngine engine = fixture.engine(fixture.server(factory, "lock:"), EngineFixture.fastSettings());
        LockHandle held = fixture.engine().lock("busy", Duration.ZERO);

        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> engine.lock("busy", Duration.ofSeconds(5)))
            .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("Interrupted");
        assertThat(Thread.interrupted()).isTrue();
        held.close();
        // the waiting call opened the release channel's connection ahead (Lettuce: on a thread of its own); a factory
        // destroyed in the middle of that connect makes Netty log an ERROR, which is not what this test is about
        Await.until(Duration.ofSeconds(5), "the subscription connection is open, or none is made (Jedis)",
                () -> kind == EngineFixture.ServerKind.JEDIS || !"0".equals(numsub("lock:leasehold:subscription")));

        ((DisposableBean) factory).destroy(); // the application is shutting down under the engine
        assertThatThrownBy(() -> engine.lock("k", Duration.ZERO))
            .isInstanceOf(LockAcquisitionException.class)
            .hasMessageContaining("connection factory is not running")
            .hasMessageNotContaining("did not answer");
    }

    /** How many connections are subscribed to {@code channel} (PUBSUB NUMSUB's count). */
    private static String numsub(String channel) {
        String[] reply = redis.server().command("PUBSUB", "NUMSUB", channel).trim().split("\\s+");
        return reply[reply.length - 1];
    }
}
