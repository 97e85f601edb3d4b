package dev.leasehold.engine.support;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.engine.Await;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CoarseTimeoutsTest {

    @Test
    void aLimitFiresOnceItsTimeHasPassedAndNotBefore() {
        try (CoarseTimeouts timeouts = new CoarseTimeouts()) {
            CompletableFuture<String> reply = new CompletableFuture<>();
            long armedAt = System.nanoTime();
            timeouts.orTimeout(reply, TimeUnit.MILLISECONDS.toNanos(200));
            Await.until(Duration.ofSeconds(5), "the limit fires", reply::isDone);
            long firedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - armedAt);
            assertThat(firedAfterMillis).isGreaterThanOrEqualTo(200);
            assertThat(reply).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(TimeoutException.class);
        }
    }

    @Test
    void aFutureThatCompletesInTimeIsLeftAlone() throws Exception {
        AtomicInteger fired = new AtomicInteger();
        try (CoarseTimeouts timeouts = new CoarseTimeouts()) {
            CompletableFuture<String> answered = new CompletableFuture<>();
            CompletableFuture<String> late = new CompletableFuture<>();
            timeouts.arm(answered, TimeUnit.MILLISECONDS.toNanos(100), fired::incrementAndGet);
            timeouts.arm(late, TimeUnit.MILLISECONDS.toNanos(100), () -> late.complete("timed out"));
            answered.complete("answer");
            Await.until(Duration.ofSeconds(5), "the other limit fires", late::isDone);
            assertThat(late.get()).isEqualTo("timed out");
            assertThat(fired).hasValue(0);
        }
    }

    @Test
    void limitsStillFireAfterTheTickWentIdleAndAfterClose() {
        CoarseTimeouts timeouts = new CoarseTimeouts();
        CompletableFuture<String> first = new CompletableFuture<>();
        timeouts.orTimeout(first, TimeUnit.MILLISECONDS.toNanos(20));
        Await.until(Duration.ofSeconds(5), "the first limit fires", first::isDone);
        // the tick stops after a second without limits; the next limit starts it again
        Await.until(Duration.ofSeconds(5), "the tick goes idle", () -> !timeouts.ticking());
        CompletableFuture<String> second = new CompletableFuture<>();
        timeouts.orTimeout(second, TimeUnit.MILLISECONDS.toNanos(20));
        Await.until(Duration.ofSeconds(5), "the second limit fires", second::isDone);
        CompletableFuture<String> pending = new CompletableFuture<>();
        timeouts.orTimeout(pending, TimeUnit.SECONDS.toNanos(60));
        timeouts.close();
        assertThat(pending).as("closing fires what is still armed").isCompletedExceptionally();
        CompletableFuture<String> afterClose = new CompletableFuture<>();
        timeouts.orTimeout(afterClose, TimeUnit.MILLISECONDS.toNanos(20));
        Await.until(Duration.ofSeconds(5), "a limit armed after close fires", afterClose::isDone);
    }
}
