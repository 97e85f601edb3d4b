package dev.leasehold.observation;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Spring Boot's tracing on (Micrometer Tracing's {@link SimpleTracer} as the application's tracer), a
 * request's trace shows how long it waited for which key and how long it held it: the wait and the hold
 * are spans whose parent is the caller's current span, for a blocking {@code tryLock}, an annotated method
 * and {@code tryLockAsync} (whose grant comes on another thread).
 */
@Timeout(60)
class LockTracingTest {

    private static final Duration OTHERS_HOLD = Duration.ofMillis(150);

    private static final Duration OWN_HOLD = Duration.ofMillis(60);

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private final SimpleTracer tracer = new SimpleTracer();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
                    MicrometerTracingAutoConfiguration.class, AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    LeaseholdAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class,
                    LeaseholdObservationAutoConfiguration.class))
            .withBean(Tracer.class, () -> tracer)
            .withBean(Shows.class)
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void aBlockingTryLockWaitsAndHoldsInsideTheCallersSpan() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            SimpleSpan request = inRequest(context, "request-blocking", () -> {
                try (LockHandle handle = locks.tryLock("show:4", Duration.ofSeconds(10), null).orElseThrow()) {
                    Thread.sleep(OWN_HOLD.toMillis());
                }
            });
            assertWaitAndHoldUnder(request, "show:4");
        });
    }

    @Test
    void anAnnotatedMethodWaitsAndHoldsInsideTheCallersSpan() {
        runner().run(context -> {
            Shows shows = context.getBean(Shows.class);
            SimpleSpan request = inRequest(context, "request-annotated", () -> shows.book(4));
            assertWaitAndHoldUnder(request, "show:4");
            // the lock's spans are not made current: the method runs in the caller's span
            assertThat(shows.spanInside()).isEqualTo(request.getSpanId());
        });
    }

    @Test
    void tryLockAsyncWaitsAndHoldsInsideTheSpanOfTheCallerThatAskedEvenThoughTheGrantComesOnAnotherThread() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            CompletableFuture<Optional<LockHandle>>[] granted = new CompletableFuture[1];
            SimpleSpan request = inRequest(context, "request-async",
                    () -> granted[0] = locks.tryLockAsync("show:4", Duration.ofSeconds(10), null).toCompletableFuture());
            // released outside the request's scope, on another thread: still the request's hold
            LockHandle handle = granted[0].get(10, TimeUnit.SECONDS).orElseThrow();
            Thread.sleep(OWN_HOLD.toMillis());
            CompletableFuture.runAsync(handle::close).get(10, TimeUnit.SECONDS);
            assertWaitAndHoldUnder(request, "show:4");
        });
    }

    /**
     * Runs {@code work} in a request span while another holder has "show:4" until {@link #OTHERS_HOLD}
     * after the request began to wait, and returns the request's span.
     */
    private SimpleSpan inRequest(ApplicationContext context, String name, Work work) throws Exception {
        LockService locks = context.getBean(LockService.class);
        ObservationRegistry registry = context.getBean(ObservationRegistry.class);
        CountDownLatch taken = new CountDownLatch(1);
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
            try (LockHandle held = locks.lock("show:4", Duration.ZERO)) {
                taken.countDown();
                // the request's wait span (the only span with a parent) has begun
                Await.until(Duration.ofSeconds(10), "the request waits", () -> tracer.getSpans()
                    .stream()
                    .anyMatch(span -> span.getParentId() != null && !span.getParentId().isEmpty()));
                Thread.sleep(OTHERS_HOLD.toMillis()); // the other holder's work, while the request waits
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue();
        Observation request = Observation.start(name, registry);
        try (Observation.Scope scope = request.openScope()) {
            work.run();
        }
        finally {
            request.stop();
        }
        other.get(10, TimeUnit.SECONDS);
        return span(name);
    }

    private void assertWaitAndHoldUnder(SimpleSpan request, String key) {
        Await.until(Duration.ofSeconds(10), "the hold span ends", () -> findSpan("lock hold show", request) != null);
        SimpleSpan wait = findSpan("lock wait show", request);
        SimpleSpan hold = findSpan("lock hold show", request);
        assertThat(wait).as("a wait span under the request's span").isNotNull();
        for (SimpleSpan span : List.of(wait, hold)) {
            assertThat(span.getTraceId()).isEqualTo(request.getTraceId());
            assertThat(span.getParentId()).isEqualTo(request.getSpanId());
            assertThat(span.getTags()).containsEntry("leasehold.lock.key", key)
                .containsEntry("leasehold.lock.name", "show")
                .containsEntry("leasehold.lock.mode", "EXCLUSIVE");
        }
        assertThat(wait.getTags()).containsEntry("leasehold.lock.outcome", "acquired");
        assertThat(hold.getTags()).containsEntry("leasehold.lock.outcome", "released")
            .containsKey("leasehold.lock.fencing_token");
        Duration waited = Duration.between(wait.getStartTimestamp(), wait.getEndTimestamp());
        Duration held = Duration.between(hold.getStartTimestamp(), hold.getEndTimestamp());
        System.out.println(request.getName() + ": waited " + waited.toMillis() + " ms for " + key + ", held "
                + held.toMillis() + " ms");
        // it waited for the other holder to finish; then held the lock for its own work
        assertThat(waited).isGreaterThanOrEqualTo(OTHERS_HOLD);
        assertThat(held).isGreaterThanOrEqualTo(OWN_HOLD);
        assertThat(hold.getStartTimestamp()).isAfterOrEqualTo(wait.getEndTimestamp().minusMillis(1));
    }

    private SimpleSpan span(String name) {
        return tracer.getSpans().stream().filter(span -> name.equals(span.getName())).findFirst().orElseThrow();
    }

    private SimpleSpan findSpan(String name, SimpleSpan parent) {
        return tracer.getSpans()
            .stream()
            .filter(span -> name.equals(span.getName()) && parent.getSpanId().equals(span.getParentId())
                    && span.getEndTimestamp() != null && !span.getEndTimestamp().equals(java.time.Instant.EPOCH))
            .findFirst()
            .orElse(null);
    }

    @FunctionalInterface
    interface Work {

        void run() throws Exception;
    }

    static class Shows {

        private final Tracer tracer;

        private volatile String spanInside;

        Shows(Tracer tracer) {
            this.tracer = tracer;
        }

        @DistributedLock(name = "show", key = "#id", waitTime = "10s")
        void book(long id) throws InterruptedException {
            spanInside = tracer.currentSpan().context().spanId();
            Thread.sleep(OWN_HOLD.toMillis());
        }

        /** A method, not the field: the bean is a proxy. */
        String spanInside() {
            return spanInside;
        }
    }
}
