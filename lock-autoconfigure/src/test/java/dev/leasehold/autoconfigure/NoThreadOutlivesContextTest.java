package dev.leasehold.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.test.redis.RedisServerExtension;
import io.lettuce.core.resource.NettyCustomizer;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract's shutdown rule: no thread of the starter outlives the application context. Checked the moment
 * {@code close()} returns, not some time later, after every kind of wait the engine has was in use.
 */
@Timeout(60)
class NoThreadOutlivesContextTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static List<String> leaseholdThreadsBut(java.util.Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && !before.contains(thread) && thread.getName().startsWith("leasehold-"))
            .map(Thread::getName)
            .sorted()
            .collect(Collectors.toList());
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = { "lettuce", "jedis" })
    void noLeaseholdThreadIsAliveOnceTheContextClosed(String client) {
        java.util.Set<Thread> before = Thread.getAllStackTraces().keySet(); // threads of earlier tests are theirs
        List<CompletionStage<Optional<LockHandle>>> asyncWaits = new ArrayList<>();
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "spring.data.redis.client-type=" + client,
                    "leasehold.key-prefix=threads-" + client + ":")
            .run(context -> {
                LockService locks = context.getBean(LockService.class);
                DefaultLockEngine engine = context.getBean(DefaultLockEngine.class);
                // every kind of wait: asynchronous ones (steps on the engine's wait thread) on a key held here
                // and on one held by another client, a blocking one, and a lock released with waiters queued
                LockHandle held = locks.lock("held", Duration.ZERO);
                redis.server().command("SET", "threads-" + client + ":{elsewhere}", "another-client", "PX", "30000");
                for (int i = 0; i < 20; i++) {
                    asyncWaits.add(locks.tryLockAsync(i % 2 == 0 ? "held" : "elsewhere", Duration.ofSeconds(20), null));
                }
                CompletableFuture<Optional<LockHandle>> blocking = CompletableFuture
                    .supplyAsync(() -> locks.tryLock("elsewhere", Duration.ofSeconds(20), null));
                Await.until(Duration.ofSeconds(5), "the waiters wait", () -> engine.waitingCount() >= 1);
                try (LockHandle passing = locks.tryLockAsync("passing", Duration.ofSeconds(1), null)
                    .toCompletableFuture().join().orElseThrow()) {
                    assertThat(passing.isHeld()).isTrue();
                }
                asyncWaits.get(0).toCompletableFuture().cancel(false);
                assertThat(blocking).isNotDone();
                assertThat(held.isHeld()).isTrue();
            });
        assertThat(leaseholdThreadsBut(before)).as("Leasehold threads alive right after the context closed").isEmpty();
    }

    /**
     * A context with a holder and two blocking waiters on its key, closed: no Leasehold thread is alive once close()
     * returned, nor a moment later (the waiters' threads end their waits after close began).
     */
    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = { "lettuce", "jedis" })
    void noLeaseholdThreadIsStartedByWaitersEndingAtClose(String client) throws Exception {
        java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
        List<CompletableFuture<Optional<LockHandle>>> waiters = new ArrayList<>();
        java.util.concurrent.ExecutorService waiterThreads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                        "spring.data.redis.port=" + redis.server().port(), "spring.data.redis.client-type=" + client,
                        "leasehold.key-prefix=waiters-" + client + ":")
                .run(context -> {
                    LockService locks = context.getBean(LockService.class);
                    DefaultLockEngine engine = context.getBean(DefaultLockEngine.class);
                    LockHandle held = locks.lock("contended", Duration.ZERO);
                    for (int i = 0; i < 2; i++) {
                        waiters.add(CompletableFuture.supplyAsync(
                                () -> locks.tryLock("contended", Duration.ofSeconds(30), null), waiterThreads));
                    }
                    Await.until(Duration.ofSeconds(10), "both waiters wait", () -> engine.waitingCount() + engine.locallyQueuedCount() >= 2);
                    assertThat(held.isHeld()).isTrue();
                });
            assertThat(leaseholdThreadsBut(before)).as("Leasehold threads alive right after the context closed").isEmpty();
            for (CompletableFuture<Optional<LockHandle>> waiter : waiters) {
                assertThat(waiter).failsWithin(Duration.ofSeconds(10));
            }
            // a thread (re)started by a waiter ending after close() would show up now
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            Await.until(Duration.ofSeconds(5), "2 s after close", () -> System.nanoTime() - until > 0
                    || !leaseholdThreadsBut(before).isEmpty());
            assertThat(leaseholdThreadsBut(before)).as("Leasehold threads alive after the waiters ended").isEmpty();
        }
        finally {
            waiterThreads.shutdownNow();
        }
    }

    /**
     * The first call that may wait opens the release channel's connection ahead, on a thread of its own. A context
     * closed right after that call (a short test, a quick restart) closed the engine, then the connection factory
     * stopped under the connect still on its way: Netty logged an ERROR ("Event loop shut down?"), Lettuce never
     * completed the connect, and the lock server's destroy method waited 10 s for it. Now the subscription
     * connection closes with the engine, in the lifecycle phase before the factory's, and a connect is waited for
     * only as long as the client's connect timeout. The subscription's connect is made slow here (300 ms before it
     * starts, as a cold JVM or a far server makes it), so that it is always still on its way when the context closes.
     */
    @RepeatedTest(2)
    void aContextClosedRightAfterItsFirstWaitingCallClosesPromptlyAndLogsNoError() {
        java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
            .getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        root.addAppender(logged);
        long[] closing = new long[1];
        try {
            new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                        "spring.data.redis.port=" + redis.server().port(), "leasehold.key-prefix=first-wait:")
                .withBean(ClientResourcesBuilderCustomizer.class, () -> resources -> resources.nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterBootstrapInitialized(io.netty.bootstrap.Bootstrap bootstrap) {
                        if (Thread.currentThread().getName().equals("leasehold-subscription-opener")) {
                            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(300).toNanos());
                        }
                    }
                }))
                .run(context -> {
                    LockService locks = context.getBean(LockService.class);
                    try (LockHandle handle = locks.tryLock("free", Duration.ofSeconds(2), null).orElseThrow()) {
                        assertThat(handle.isHeld()).isTrue();
                    }
                    closing[0] = System.nanoTime();
                });
        }
        finally {
            root.detachAppender(logged);
        }
        Duration closed = Duration.ofNanos(System.nanoTime() - closing[0]);
        assertThat(logged.list).as("what was logged at ERROR while the context closed")
            .filteredOn(event -> event.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.ERROR))
            .extracting(event -> event.getThreadName() + ": " + event.getFormattedMessage()).isEmpty();
        assertThat(closed).as("the context's close").isLessThan(Duration.ofSeconds(3));
        assertThat(leaseholdThreadsBut(before)).as("Leasehold threads alive right after the context closed").isEmpty();
    }
}
