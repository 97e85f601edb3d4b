package dev.leasehold.aspect;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;
import dev.leasehold.OnLockFailure;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Methods returning a stage or a publisher hold their lock until the result ends, not until they return. */
@Timeout(60)
class AsyncResultsTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return AspectContexts.on(redis.server()).withBean(Jobs.class);
    }

    private static boolean locked(String key) {
        return DistributedLockAspectTest.lockedInRedis(redis.server(), key);
    }

    private static void eventually(String what, BooleanSupplier condition) {
        Await.until(Duration.ofSeconds(20), what, condition);
    }

    @Test
    void aCompletableFutureHoldsTheLockUntilItCompletes() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> result = jobs.later("f1", work);
            assertThat(result).isNotDone();
            assertThat(locked("job:f1")).as("held after the method returned").isTrue();
            CompletableFuture<String> second = jobs.later("f1", new CompletableFuture<>());
            assertThatThrownBy(second::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(LockAcquisitionException.class);

            work.complete("done");
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(locked("job:f1")).as("released by the time the caller sees the result").isFalse();
        });
    }

    @Test
    void aFailedStageAndAThrowingMethodRelease() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> result = jobs.later("f2", work);
            work.completeExceptionally(new IllegalStateException("failed"));
            assertThatThrownBy(() -> result.get(5, TimeUnit.SECONDS)).hasRootCauseMessage("failed");
            assertThat(locked("job:f2")).isFalse();

            assertThatThrownBy(() -> jobs.throwing("f2")).isInstanceOf(IllegalStateException.class)
                .hasMessage("thrown holding the lock");
            assertThat(locked("job:f2")).isFalse();
        });
    }

    @Test
    void aStageCompletedOnARedisIoThreadIsReleasedAtOnce() {
        // released on the thread that completed the stage, a blocking release would wait on its own reply
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<String> result = jobs.afterRedisReply("io",
                    context.getBean(org.springframework.data.redis.connection.RedisConnectionFactory.class));
            long started = System.nanoTime();
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
            assertThat(locked("job:io")).isFalse();
        });
    }

    @Test
    void cancellingTheReturnedFutureDoesNotReleaseWhileTheWorkRuns() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> result = jobs.later("f4", work);
            result.cancel(true);
            assertThat(locked("job:f4")).as("the work still runs").isTrue();
            work.complete("done");
            eventually("released when the work ended", () -> !locked("job:f4"));
        });
    }

    @Test
    void aBusyStageSkipsOrFallsBack() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            redis.server().command("SET", "lock:{job:busy-stage}", "another-client", "PX", "20000");
            assertThat(jobs.laterSkipping("busy-stage").get(5, TimeUnit.SECONDS)).as("an empty Optional").isEmpty();
            assertThat(jobs.laterWithFallback("busy-stage").get(5, TimeUnit.SECONDS)).isEqualTo("fallback busy-stage");
            assertThat(jobs.calls()).isZero();
        });
    }

    @Test
    void aReactiveMultiLockHoldsEveryKeyUntilItEnds() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            Sinks.One<String> work = Sinks.one();
            CompletableFuture<String> result = jobs.several(java.util.List.of("r2", "r1"), work).toFuture();
            eventually("both locked", () -> locked("job:r1") && locked("job:r2"));
            work.tryEmitValue("done");
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            eventually("both released", () -> !locked("job:r1") && !locked("job:r2"));
        });
    }

    @Test
    void theCallingThreadDoesNotReenterALockItsStageStillHolds() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            jobs.later("f3", work);
            // the same thread calls again: the first call's work is still running, so it must not get in
            assertThatThrownBy(() -> jobs.later("f3", new CompletableFuture<>()).join())
                .hasCauseInstanceOf(LockAcquisitionException.class);
            work.complete("done");
        });
    }

    @Test
    void aMonoLocksOnSubscriptionAndReleasesWhenItCompletes() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            Sinks.One<String> work = Sinks.one();
            Mono<String> mono = jobs.mono("m1", work);
            assertThat(jobs.calls()).as("nothing runs before subscription").isZero();
            assertThat(locked("job:m1")).isFalse();

            CompletableFuture<String> result = mono.toFuture();
            eventually("the method ran under the lock", () -> jobs.calls() == 1);
            assertThat(locked("job:m1")).isTrue();
            assertThat(jobs.tokenSeen()).as("the handle is in the Reactor context").isPositive();
            work.tryEmitValue("done");
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            eventually("released", () -> !locked("job:m1"));
        });
    }

    @Test
    void aMonoReleasesOnErrorAndOnCancel() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            Sinks.One<String> failing = Sinks.one();
            CompletableFuture<String> failed = jobs.mono("m2", failing).toFuture();
            eventually("locked", () -> locked("job:m2"));
            failing.tryEmitError(new IllegalStateException("failed"));
            assertThatThrownBy(() -> failed.get(5, TimeUnit.SECONDS)).hasRootCauseMessage("failed");
            eventually("released after the error", () -> !locked("job:m2"));

            Disposable subscription = jobs.mono("m2", Sinks.one()).subscribe();
            eventually("locked", () -> locked("job:m2"));
            subscription.dispose();
            eventually("released after the cancel", () -> !locked("job:m2"));
        });
    }

    @Test
    void cancellingWhileTheLockIsBeingTakenNeverLeavesItHeld() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            for (int i = 0; i < 15; i++) {
                Disposable subscription = jobs.mono("m5", Sinks.one()).subscribe();
                // cancel the moment the grant is in Redis: the subscriber may not have it yet
                eventually("locked", () -> locked("job:m5"));
                subscription.dispose();
            }
            // a leaked grant would hold the key for its whole 30 s lease
            java.util.Optional<LockHandle> after = context.getBean(dev.leasehold.LockService.class)
                .tryLock("job:m5", Duration.ofSeconds(10), null);
            assertThat(after).as("every cancelled subscription gave its lock back").isPresent();
            after.get().close();
        });
    }

    @Test
    void theMethodsOwnMonoEndsWithItsCompletionNotACancel() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            java.util.concurrent.atomic.AtomicReference<reactor.core.publisher.SignalType> ended =
                    new java.util.concurrent.atomic.AtomicReference<>();
            assertThat(jobs.ending("m6", ended).block(Duration.ofSeconds(10))).isEqualTo("done");
            // before the fix the aspect cancelled it right after its value: doFinally saw CANCEL
            eventually("the method's Mono ended", () -> ended.get() != null);
            assertThat(ended.get()).isEqualTo(reactor.core.publisher.SignalType.ON_COMPLETE);
        });
    }

    @Test
    void everySubscriptionRunsTheMethodUnderItsOwnLock() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            Mono<Long> token = jobs.token("m3");
            long first = token.block(Duration.ofSeconds(5));
            long second = token.block(Duration.ofSeconds(5));
            assertThat(second).isGreaterThan(first);
            assertThat(jobs.calls()).isEqualTo(2);
            assertThat(locked("job:m3")).isFalse();
        });
    }

    @Test
    void waitingForAReactiveLockDoesNotBlockTheSubscribingThread() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            redis.server().command("SET", "lock:{job:m4}", "another-client", "PX", "1500"); // token() waits 2 s
            AtomicLong subscribeNanos = new AtomicLong(-1);
            CompletableFuture<Long> result = new CompletableFuture<>();
            Schedulers.parallel().schedule(() -> {
                long started = System.nanoTime();
                jobs.token("m4").subscribe(result::complete, result::completeExceptionally);
                subscribeNanos.set(System.nanoTime() - started);
            });
            assertThat(result.get(15, TimeUnit.SECONDS)).as("granted once the other client's lease ran out").isPositive();
            // a blocking subscribe would return only after the other client's 1.5 s lease
            assertThat(Duration.ofNanos(subscribeNanos.get())).as("subscribe() on a non-blocking thread")
                .isLessThan(Duration.ofMillis(1000));
        });
    }

    @Test
    void aFluxHoldsTheLockUntilItEndsAndReleasesWhenCancelled() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            StepVerifier.create(jobs.flux("x1", 3)).expectNext(0L, 1L, 2L).verifyComplete();
            eventually("released after completion", () -> !locked("job:x1"));

            StepVerifier.create(jobs.flux("x2", Long.MAX_VALUE).take(2)).expectNext(0L, 1L).verifyComplete();
            eventually("released after the cancel of an endless flux", () -> !locked("job:x2"));
        });
    }

    @Test
    void aBusyReactiveLockFailsSkipsOrFallsBackInTheStream() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            // the first call of a fresh context connects to Redis, which can take seconds on a loaded machine:
            // connect first, so the 5 s bounds below measure the failure path only
            context.getBean(dev.leasehold.LockService.class).isLocked("warm-up");
            redis.server().command("SET", "lock:{job:busy}", "another-client", "PX", "20000");
            StepVerifier.create(jobs.busy("busy")).expectError(LockAcquisitionException.class).verify(Duration.ofSeconds(30)); // a bound for "never", not a speed
            StepVerifier.create(jobs.busySkipping("busy")).verifyComplete();
            StepVerifier.create(jobs.busyWithFallback("busy")).expectNext("fallback busy").verifyComplete();
            assertThat(jobs.calls()).isZero();
        });
    }

    public static class Jobs {

        final AtomicInteger calls = new AtomicInteger();

        final AtomicLong tokenSeen = new AtomicLong();

        public int calls() {
            return calls.get();
        }

        public long tokenSeen() {
            return tokenSeen.get();
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0")
        public CompletableFuture<String> later(String id, CompletableFuture<String> work) {
            return work.thenApply(value -> value);
        }

        @DistributedLock(name = "job", key = "#id")
        public CompletableFuture<String> throwing(String id) {
            throw new IllegalStateException(locked("job:" + id) ? "thrown holding the lock" : "thrown unlocked");
        }

        @DistributedLock(name = "job", key = "#id")
        public CompletableFuture<String> afterRedisReply(String id,
                org.springframework.data.redis.connection.RedisConnectionFactory redis) {
            org.springframework.data.redis.connection.lettuce.LettuceConnection connection =
                    (org.springframework.data.redis.connection.lettuce.LettuceConnection) redis.getConnection();
            try {
                // completes on Lettuce's I/O thread, the one that also carries the engine's replies
                return connection.getNativeConnection().ping().toCompletableFuture().thenApply(pong -> pong);
            }
            finally {
                connection.close();
            }
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public CompletableFuture<java.util.Optional<String>> laterSkipping(String id) {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(java.util.Optional.of("ran"));
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0", fallback = "stageFallback")
        public CompletableFuture<String> laterWithFallback(String id) {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture("ran");
        }

        CompletableFuture<String> stageFallback(String id) {
            return CompletableFuture.completedFuture("fallback " + id);
        }

        @DistributedLock(name = "job", key = "#ids")
        public Mono<String> several(java.util.List<String> ids, Sinks.One<String> work) {
            return work.asMono();
        }

        @DistributedLock(name = "job", key = "#id")
        public Mono<String> mono(String id, Sinks.One<String> work) {
            calls.incrementAndGet();
            return Mono.deferContextual(context -> {
                tokenSeen.set(context.get(LockHandle.class).fencingToken());
                return work.asMono();
            });
        }

        @DistributedLock(name = "job", key = "#id")
        public Mono<String> ending(String id,
                java.util.concurrent.atomic.AtomicReference<reactor.core.publisher.SignalType> ended) {
            return Mono.just("done").doFinally(ended::set);
        }

        @DistributedLock(name = "job", key = "#id")
        public Mono<Long> token(String id) {
            calls.incrementAndGet();
            return Mono.deferContextual(context -> Mono.just(context.get(LockHandle.class).fencingToken()));
        }

        @DistributedLock(name = "job", key = "#id")
        public Flux<Long> flux(String id, long count) {
            return Flux.interval(Duration.ofMillis(5)).take(count)
                .doOnNext(tick -> assertThat(LockContext.current()).isEmpty());
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0")
        public Mono<String> busy(String id) {
            calls.incrementAndGet();
            return Mono.just("ran");
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public Mono<String> busySkipping(String id) {
            calls.incrementAndGet();
            return Mono.just("ran");
        }

        @DistributedLock(name = "job", key = "#id", waitTime = "0", fallback = "fallback")
        public Mono<String> busyWithFallback(String id) {
            calls.incrementAndGet();
            return Mono.just("ran");
        }

        Mono<String> fallback(String id) {
            return Mono.just("fallback " + id);
        }
    }
}
