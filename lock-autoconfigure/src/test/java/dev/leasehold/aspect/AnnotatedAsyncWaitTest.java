package dev.leasehold.aspect;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock} on a method returning a {@code Mono} or a {@code CompletableFuture} waits for a
 * busy key through {@code tryLockAsync}: no thread is parked in a lock call while it waits, however many
 * calls wait. The key is held by a second application context, as another instance would hold it.
 */
@Timeout(120)
class AnnotatedAsyncWaitTest {

    private static final int WAITERS = 200;

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return AspectContexts.on(redis.server()).withBean(Waiters.class);
    }

    @Test
    void manyMonoCallsWaitingOnAHeldKeyAddNoThreadsAndAreServedInOrder() {
        runner().run(other -> runner().run(context -> {
            Waiters waiters = context.getBean(Waiters.class);
            waiters.token("warm-up").block(Duration.ofSeconds(10)); // connections and engine threads exist now
            LockHandle held = other.getBean(LockService.class).lock("wait:hot", Duration.ofSeconds(5));
            int threadsBefore = liveThreads();

            List<CompletableFuture<Long>> tokens = new ArrayList<>();
            for (int i = 0; i < WAITERS; i++) {
                tokens.add(waiters.token("hot").toFuture()); // subscribes: each call starts waiting now
            }
            awaitOneAsleepOnTheRelease(context);

            int threadsWhileWaiting = liveThreads();
            System.out.printf("%d annotated Mono calls waiting: %d threads before, %d while waiting%n", WAITERS,
                    threadsBefore, threadsWhileWaiting);
            assertThat(threadsInsideALockWait()).as("threads parked in a lock call").isEmpty();
            assertThat(threadsWhileWaiting - threadsBefore).as("threads added while %d calls wait", WAITERS)
                .isLessThanOrEqualTo(3);
            assertThat(tokens).noneMatch(CompletableFuture::isDone);

            held.close();
            CompletableFuture.allOf(tokens.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertIncreasing(tokens);
            assertThat(waiters.calls()).isEqualTo(WAITERS + 1);
            assertThat(DistributedLockAspectTest.lockedInRedis(redis.server(), "wait:hot")).isFalse();
        }));
    }

    @Test
    void completableFutureCallsOnAHeldKeyReturnAtOnceAndRunWhenLocked() {
        runner().run(other -> runner().run(context -> {
            Waiters waiters = context.getBean(Waiters.class);
            waiters.later("warm-up").get(10, TimeUnit.SECONDS);
            LockHandle held = other.getBean(LockService.class).lock("wait:stage", Duration.ofSeconds(5));
            int threadsBefore = liveThreads();

            List<CompletableFuture<Long>> tokens = new ArrayList<>();
            long started = System.nanoTime();
            for (int i = 0; i < WAITERS; i++) {
                tokens.add(waiters.later("stage")); // one try on this thread, then the wait is asynchronous
            }
            Duration calling = Duration.ofNanos(System.nanoTime() - started);
            awaitOneAsleepOnTheRelease(context);

            int threadsWhileWaiting = liveThreads();
            System.out.printf("%d annotated CompletableFuture calls on a held key returned in %d ms; threads %d before, "
                    + "%d while waiting%n", WAITERS, calling.toMillis(), threadsBefore, threadsWhileWaiting);
            // blocking for the wait, the first call alone would have taken the whole 30 s wait
            assertThat(calling).as("calls on a held key return without waiting").isLessThan(Duration.ofSeconds(20));
            assertThat(threadsInsideALockWait()).as("threads parked in a lock call").isEmpty();
            assertThat(threadsWhileWaiting - threadsBefore).isLessThanOrEqualTo(3);
            assertThat(waiters.calls()).as("no method ran before its lock").isEqualTo(1);

            held.close();
            CompletableFuture.allOf(tokens.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertIncreasing(tokens);
            assertThat(DistributedLockAspectTest.lockedInRedis(redis.server(), "wait:stage")).isFalse();
        }));
    }

    @Test
    void cancelledWaitersGiveUpTheirPlaceAndNeverRun() {
        runner().run(other -> runner().run(context -> {
            Waiters waiters = context.getBean(Waiters.class);
            LockHandle held = other.getBean(LockService.class).lock("wait:cancel", Duration.ofSeconds(5));
            Disposable mono = waiters.token("cancel").subscribe();
            CompletableFuture<Long> stage = waiters.later("cancel");
            CompletableFuture<Long> last = waiters.later("cancel");
            awaitOneAsleepOnTheRelease(context);

            mono.dispose();
            stage.cancel(false);
            long releasedAt = System.nanoTime();
            held.close();
            assertThat(last.get(30, TimeUnit.SECONDS)).as("the waiter behind the cancelled ones").isPositive();
            System.out.printf("the waiter behind two cancelled ones got the lock %d ms after the release%n",
                    (System.nanoTime() - releasedAt) / 1_000_000);
            assertThat(waiters.calls()).as("cancelled waiters never ran").isEqualTo(1);
            Await.until(Duration.ofSeconds(10), "the key is free",
                    () -> !DistributedLockAspectTest.lockedInRedis(redis.server(), "wait:cancel"));
        }));
    }

    @Test
    void aReactiveHoldAtLeastKeepsTheKeyAfterTheMonoEnded() {
        runner().run(context -> {
            Waiters waiters = context.getBean(Waiters.class);
            waiters.held("once").block(Duration.ofSeconds(10));
            long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{hold:once}").trim());
            assertThat(ttl).as("milliseconds the key stays after the Mono ended").isBetween(1L, 5000L);
            assertThat(context.getBean(DefaultLockEngine.class).heldLockCount()).as("released in this JVM").isZero();
        });
    }

    private static void awaitOneAsleepOnTheRelease(AssertableApplicationContext context) {
        DefaultLockEngine engine = context.getBean(DefaultLockEngine.class);
        Await.until(Duration.ofSeconds(20), "a waiter is asleep until the release", () -> engine.waitingCount() == 1);
    }

    private static void assertIncreasing(List<CompletableFuture<Long>> tokens) {
        List<Long> values = tokens.stream().map(CompletableFuture::join).toList();
        for (int i = 1; i < values.size(); i++) {
            assertThat(values.get(i)).as("token of call %d, served in call order", i).isGreaterThan(values.get(i - 1));
        }
    }

    private static int liveThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** Threads inside a blocking lock call: the engine's tryLock, or the aspect's blocking acquire. */
    private static List<String> threadsInsideALockWait() {
        List<String> inside = new ArrayList<>();
        for (Map.Entry<Thread, StackTraceElement[]> each : Thread.getAllStackTraces().entrySet()) {
            for (StackTraceElement frame : each.getValue()) {
                if (frame.getClassName().startsWith("dev.leasehold.engine.CallerThreadSteps")
                        || (frame.getClassName().startsWith("dev.leasehold.") && frame.getMethodName().equals("acquire")
                                && frame.getClassName().endsWith("DistributedLockInterceptor"))) {
                    inside.add(each.getKey().getName());
                    break;
                }
            }
        }
        return inside;
    }

    public static class Waiters {

        final AtomicInteger calls = new AtomicInteger();

        public int calls() {
            return calls.get();
        }

        @DistributedLock(name = "wait", key = "#id", waitTime = "30s")
        public Mono<Long> token(String id) {
            calls.incrementAndGet();
            return Mono.deferContextual(context -> Mono.just(context.get(LockHandle.class).fencingToken()));
        }

        @DistributedLock(name = "wait", key = "#id", waitTime = "30s")
        public CompletableFuture<Long> later(String id) {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(LockContext.current().orElseThrow().fencingToken());
        }

        @DistributedLock(name = "hold", key = "#id", holdAtLeast = "3s")
        public Mono<String> held(String id) {
            return Mono.just(id);
        }
    }
}
