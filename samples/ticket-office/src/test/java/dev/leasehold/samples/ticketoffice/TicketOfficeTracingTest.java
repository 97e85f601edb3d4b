package dev.leasehold.samples.ticketoffice;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.builder.SpringApplicationBuilder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Spring Boot's tracing on (Micrometer Tracing's {@link SimpleTracer} standing in for Brave or
 * OpenTelemetry), the trace of a booking request shows how long it waited for the show's lock and how long it
 * held it: two spans under the request's own.
 */
@Timeout(120)
class TicketOfficeTracingTest {

    private static final Duration OTHERS_HOLD = Duration.ofMillis(200);

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    static final SimpleTracer tracer = new SimpleTracer();

    static TicketOfficeNode node;

    @BeforeAll
    static void start() {
        SpringApplicationBuilder application = new SpringApplicationBuilder(TicketOfficeApplication.class)
            .initializers(context -> context.getBeanFactory().registerSingleton("tracer", tracer));
        node = TicketOfficeNode.start(application, "traced", redis.server(), "traced", "traced:",
                "--ticket-office.payment-time=20ms");
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aBookingRequestsTraceShowsItsLockWaitAndHold() throws Exception {
        long showId = node.createShow("Traced", 10);
        String key = "show:" + showId;
        // another holder has the show's lock: the request waits for it
        LockHandle other = node.context.getBean(LockService.class).lock(key, Duration.ZERO);
        CompletableFuture<HttpResponse<String>> booking = CompletableFuture
            .supplyAsync(() -> node.post("/api/shows/" + showId + "/bookings", "{\"seats\":1}"));
        // the same observation is a long task timer while it goes on
        MeterRegistry meters = node.context.getBean(MeterRegistry.class);
        Await.until(Duration.ofSeconds(10), "the request waits for the lock", () -> meters.find("leasehold.lock.wait.active")
            .tag("leasehold.lock.name", "show")
            .longTaskTimers()
            .stream()
            .anyMatch(timer -> timer.activeTasks() > 0));
        Thread.sleep(OTHERS_HOLD.toMillis()); // the other holder's work, while the request waits
        other.close();
        assertThat(booking.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);

        Await.until(Duration.ofSeconds(10), "the request's span ends", () -> {
            SimpleSpan wait = span("lock wait show", key);
            return wait != null && ended(request(wait));
        });
        SimpleSpan wait = span("lock wait show", key);
        SimpleSpan hold = span("lock hold show", key);
        SimpleSpan request = request(wait);
        assertThat(request.getName()).isEqualTo("http post /api/shows/{showId}/bookings");
        assertThat(hold.getParentId()).isEqualTo(request.getSpanId());
        assertThat(hold.getTraceId()).isEqualTo(wait.getTraceId()).isEqualTo(request.getTraceId());
        assertThat(wait.getTags()).containsEntry("leasehold.lock.outcome", "acquired");
        assertThat(hold.getTags()).containsEntry("leasehold.lock.outcome", "released")
            .containsEntry("leasehold.lock.key", key);
        Duration waited = Duration.between(wait.getStartTimestamp(), wait.getEndTimestamp());
        Duration held = Duration.between(hold.getStartTimestamp(), hold.getEndTimestamp());
        System.out.println("trace " + request.getTraceId() + " " + request.getName() + ": waited " + waited.toMillis()
                + " ms for " + key + ", held " + held.toMillis() + " ms");
        assertThat(waited).isGreaterThanOrEqualTo(OTHERS_HOLD);
        // the hold covers the booking's transaction, with its 20 ms payment
        assertThat(held).isGreaterThanOrEqualTo(Duration.ofMillis(20));
        assertThat(request.getStartTimestamp()).isBeforeOrEqualTo(wait.getStartTimestamp());
        assertThat(request.getEndTimestamp()).isAfterOrEqualTo(hold.getEndTimestamp());
    }

    /**
     * The ended lock span of this key under a request (tags and names are final once a span ended); the
     * test's own lock, taken outside any request, is a trace of its own.
     */
    private static SimpleSpan span(String name, String key) {
        return tracer.getSpans()
            .stream()
            .filter(span -> ended(span) && name.equals(span.getName())
                    && key.equals(span.getTags().get("leasehold.lock.key")) && request(span) != null)
            .findFirst()
            .orElse(null);
    }

    private static SimpleSpan request(SimpleSpan child) {
        return tracer.getSpans()
            .stream()
            .filter(span -> span.getSpanId().equals(child.getParentId()))
            .findFirst()
            .orElse(null);
    }

    private static boolean ended(SimpleSpan span) {
        return span != null && span.getEndTimestamp() != null && span.getEndTimestamp().isAfter(Instant.EPOCH);
    }
}
