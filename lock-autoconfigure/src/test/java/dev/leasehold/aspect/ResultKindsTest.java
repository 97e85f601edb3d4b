package dev.leasehold.aspect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdQuorumAutoConfiguration;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One annotation, every result kind ({@link ResultKind}: plain, {@code CompletionStage}, {@code Mono},
 * {@code Flux}), on every backend (Lettuce, Jedis, quorum mode on five nodes): each waits the same way. Redis
 * errors inside the wait are tried again until the wait ends; the caller's own keys are re-entered; a caller
 * that gives up stops the wait and leaves nothing held; within an open transaction the lock is held until the
 * transaction completed. The key is held elsewhere by a second application context, as another instance would.
 */
@Timeout(120)
class ResultKindsTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static final List<TestRedisServer> nodes = new ArrayList<>();

    private final ExecutorService callers = Executors.newCachedThreadPool();

    enum Backend {
        LETTUCE, JEDIS, QUORUM
    }

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < 5; i++) {
            nodes.add(TestRedisServers.startOwn(List.of(), Map.of()));
        }
    }

    @AfterAll
    static void stopNodes() {
        nodes.forEach(TestRedisServer::close);
    }

    @AfterEach
    void resumeAndStop() {
        nodes.forEach(TestRedisServer::resume);
        callers.shutdownNow();
    }

    static Stream<Arguments> everyKindOnEveryBackend() {
        List<Arguments> all = new ArrayList<>();
        for (Backend backend : Backend.values()) {
            for (ResultKind kind : ResultKind.values()) {
                all.add(Arguments.of(backend, kind));
            }
        }
        return all.stream();
    }

    private ApplicationContextRunner runner(Backend backend) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    LeaseholdQuorumAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdAnnotationAutoConfiguration.class, DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "leasehold.redis-timeout=300ms",
                    "spring.datasource.url=jdbc:h2:mem:kinds;DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false")
            .withBean(ResultKind.Calls.class)
            .withBean(WaitJournal.class);
        return switch (backend) {
            case LETTUCE -> runner;
            case JEDIS -> runner.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.timeout=1s");
            case QUORUM -> runner.withPropertyValues("leasehold.quorum.nodes="
                    + String.join(",", nodes.stream().map(TestRedisServer::url).toList()));
        };
    }

    /** The key as the annotation names it (name "kinds", then the key). */
    private static String lockKey(String key) {
        return "kinds:" + key;
    }

    private static String unique(Backend backend, ResultKind kind, String what) {
        return what + "-" + backend.name().toLowerCase() + "-" + kind.name().toLowerCase();
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("everyKindOnEveryBackend")
    void redisErrorsInsideTheWaitAreTriedAgainUntilTheWaitEnds(Backend backend, ResultKind kind) {
        runner(backend).run(context -> {
            ResultKind.Calls calls = context.getBean(ResultKind.Calls.class);
            String key = unique(backend, kind, "errors");
            assertThat(kind.call(calls, List.of(key)).get(20, TimeUnit.SECONDS)).isEqualTo("ran"); // connected
            // Redis (a majority of the nodes) stops answering for 800 ms; each try fails after redis-timeout (300 ms)
            List<TestRedisServer> stalled = backend == Backend.QUORUM ? nodes.subList(0, 3) : List.of(redis.server());
            stalled.forEach(TestRedisServer::pause);
            long pausedAt = System.nanoTime();
            callers.submit(() -> {
                Await.until(Duration.ofSeconds(10), "800 ms passed", () -> System.nanoTime() - pausedAt > 800_000_000L);
                stalled.forEach(TestRedisServer::resume);
            });
            // before the fix a CompletionStage method failed at the first error ("... within PT0S")
            assertThat(kind.call(calls, List.of(key)).get(30, TimeUnit.SECONDS)).isEqualTo("ran");
            assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isGreaterThan(Duration.ofMillis(700));
            assertThat(calls.ran()).isEqualTo(2);
        });
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("everyKindOnEveryBackend")
    void theCallersOwnKeyIsReenteredWhileALaterKeyIsWaitedFor(Backend backend, ResultKind kind) {
        runner(backend).run(other -> runner(backend).run(context -> {
            ResultKind.Calls calls = context.getBean(ResultKind.Calls.class);
            LockService locks = context.getBean(LockService.class);
            String own = unique(backend, kind, "own");
            String busy = unique(backend, kind, "busy");
            LockHandle elsewhere = other.getBean(LockService.class).lock(lockKey(busy), Duration.ofSeconds(10));
            callers.submit(() -> { // the other instance lets go after 300 ms
                long heldAt = System.nanoTime();
                Await.until(Duration.ofSeconds(10), "300 ms passed", () -> System.nanoTime() - heldAt > 300_000_000L);
                elsewhere.close();
            });
            try (LockHandle outer = locks.lock(lockKey(own), Duration.ofSeconds(10))) {
                // before the fix the stage and publisher waits queued behind this very thread for its own key
                assertThat(kind.call(calls, List.of(own, busy)).get(15, TimeUnit.SECONDS)).isEqualTo("ran");
                assertThat(outer.isHeld()).isTrue();
            }
            Await.until(Duration.ofSeconds(10), "both keys free",
                    () -> !locks.isLocked(lockKey(own)) && !locks.isLocked(lockKey(busy)));
        }));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("everyKindOnEveryBackend")
    void aCallerThatGivesUpStopsTheWaitAndNothingIsLeftHeld(Backend backend, ResultKind kind) {
        runner(backend).run(other -> runner(backend).run(context -> {
            ResultKind.Calls calls = context.getBean(ResultKind.Calls.class);
            DefaultLockEngine engine = context.getBean(DefaultLockEngine.class);
            WaitJournal waits = context.getBean(WaitJournal.class);
            String key = unique(backend, kind, "gives-up");
            LockService elsewhere = other.getBean(LockService.class);
            LockHandle held = elsewhere.lock(lockKey(key), Duration.ofSeconds(10));
            CompletableFuture<String> outcome = kind.callGivingUpAfter(calls, List.of(key), Duration.ofSeconds(1),
                    callers, () -> waits.started(lockKey(key)) > 0);
            assertThat(outcome).failsWithin(Duration.ofSeconds(20));
            // before the fix a stage's wait went on for its whole 20 s after the caller's timeout
            Await.until(Duration.ofSeconds(8), "every wait for the key ended with the caller",
                    () -> waits.started(lockKey(key)) > 0 && waits.ended(lockKey(key)) == waits.started(lockKey(key)));
            assertThat(waits.granted(lockKey(key))).isZero();
            held.close();
            Optional<LockHandle> again = elsewhere.tryLock(lockKey(key), Duration.ofSeconds(5), null);
            assertThat(again).as("nothing held for the caller that gave up").isPresent();
            again.get().close();
            assertThat(calls.ran()).as("the method never ran").isZero();
            assertThat(engine.heldLockCount()).isZero();
        }));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("everyKindOnEveryBackend")
    void withinAnOpenTransactionTheLockIsHeldUntilTheTransactionCompleted(Backend backend, ResultKind kind) {
        runner(backend).run(other -> runner(backend).run(context -> {
            ResultKind.Calls calls = context.getBean(ResultKind.Calls.class);
            TransactionTemplate transaction = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            LockService elsewhere = other.getBean(LockService.class);
            String key = unique(backend, kind, "transaction");
            Optional<LockHandle> takenBeforeCommit = transaction.execute(status -> {
                try {
                    // the result completes inside the transaction (a caller that waits for it does not deadlock)
                    assertThat(kind.call(calls, List.of(key)).get(15, TimeUnit.SECONDS)).isEqualTo("ran");
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
                // before the fix a stage's or publisher's lock was gone here, before the commit
                return elsewhere.tryLock(lockKey(key), Duration.ofSeconds(1), null);
            });
            takenBeforeCommit.ifPresent(LockHandle::close);
            assertThat(takenBeforeCommit).as("another instance got the key before the commit").isEmpty();
            Optional<LockHandle> afterCommit = elsewhere.tryLock(lockKey(key), Duration.ofSeconds(10), null);
            assertThat(afterCommit).as("released once the transaction completed").isPresent();
            afterCommit.get().close();
        }));
    }

    /** Follows this application's waits per key (a LockObserver bean, as the application's own would be). */
    static class WaitJournal implements LockObserver {

        private final Map<String, AtomicInteger> started = new ConcurrentHashMap<>();

        private final Map<String, AtomicInteger> ended = new ConcurrentHashMap<>();

        private final Map<String, AtomicInteger> granted = new ConcurrentHashMap<>();

        int started(String key) {
            return count(started, key).get();
        }

        int ended(String key) {
            return count(ended, key).get();
        }

        int granted(String key) {
            return count(granted, key).get();
        }

        private static AtomicInteger count(Map<String, AtomicInteger> counts, String key) {
            return counts.computeIfAbsent(key, k -> new AtomicInteger());
        }

        @Override
        public Attempt waitStarted(String key, LockMode mode) {
            count(started, key).incrementAndGet();
            return new Attempt() {
                @Override
                public void granted(long fencingToken) {
                    count(granted, key).incrementAndGet();
                    count(ended, key).incrementAndGet();
                }

                @Override
                public void timedOut() {
                    count(ended, key).incrementAndGet();
                }

                @Override
                public void failed(Throwable error) {
                    count(ended, key).incrementAndGet();
                }

                @Override
                public void cancelled() {
                    count(ended, key).incrementAndGet();
                }
            };
        }
    }
}
