package dev.leasehold.observation;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The observations of waits and holds, as an application with an {@link ObservationRegistry} gets them from
 * the auto-configuration, on a real Redis; checked with Micrometer's observation test support.
 */
@Timeout(60)
class LockObservationsTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private TestObservationRegistry registry;

    /** How often each observation was stopped: once, or the observation is wrong (and TestObservationRegistry's check throws where the engine swallows it). */
    private final Map<Observation.Context, Integer> stops = new ConcurrentHashMap<>();

    private final List<Observation.Context> started = new CopyOnWriteArrayList<>();

    @BeforeEach
    void registry() {
        registry = TestObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                started.add(context);
            }

            @Override
            public void onStop(Observation.Context context) {
                stops.merge(context, 1, Integer::sum);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    LeaseholdAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class,
                    LeaseholdObservationAutoConfiguration.class))
            .withBean(ObservationRegistry.class, () -> registry)
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "leasehold.redis-timeout=300ms",
                    "spring.data.redis.timeout=300ms");
    }

    /** Spring Boot's own registry and meter handler, as an application with Actuator has them. */
    private ApplicationContextRunner springBootMetrics() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdObservationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void aWaitAndAHoldAreObservedAsChildrenOfTheCallersObservationWithTheKeyOnlyAsAHighCardinalityValue() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            Observation request = Observation.start("request", registry);
            LockHandle handle;
            try (Observation.Scope scope = request.openScope()) {
                handle = locks.tryLock("show:4", Duration.ofSeconds(1), null).orElseThrow();
                locks.tryLock("show:4", Duration.ZERO, null).orElseThrow().close(); // a re-entry is not observed
            }
            assertThat(registry).hasNumberOfObservationsWithNameEqualTo("leasehold.lock.wait", 1)
                .hasObservationWithNameEqualTo("leasehold.lock.wait")
                .that()
                .hasBeenStopped()
                .hasContextualNameEqualTo("lock wait show")
                .hasLowCardinalityKeyValue("leasehold.lock.name", "show")
                .hasLowCardinalityKeyValue("leasehold.lock.mode", "EXCLUSIVE")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "acquired")
                .hasHighCardinalityKeyValue("leasehold.lock.key", "show:4")
                .doesNotHaveLowCardinalityKeyValueWithKey("leasehold.lock.key")
                .hasParentObservationEqualTo(request);
            // held now: the hold goes on until the release
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.hold")
                .that()
                .hasBeenStarted()
                .isNotStopped()
                .hasParentObservationEqualTo(request);
            handle.close();
            assertThat(registry).hasNumberOfObservationsWithNameEqualTo("leasehold.lock.hold", 1)
                .hasObservationWithNameEqualTo("leasehold.lock.hold")
                .that()
                .hasBeenStopped()
                .hasContextualNameEqualTo("lock hold show")
                .hasLowCardinalityKeyValue("leasehold.lock.name", "show")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "released")
                .hasHighCardinalityKeyValue("leasehold.lock.key", "show:4")
                .hasHighCardinalityKeyValue("leasehold.lock.fencing_token", Long.toString(handle.fencingToken()))
                .doesNotHaveError();
            request.stop();
            assertThat(stops.values()).containsOnly(1);
        });
    }

    @Test
    void aWaitThatRanOutIsTimedOutAndHasNoHold() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            try (LockHandle held = locks.lock("settlement", Duration.ZERO)) {
                CompletableFuture<Optional<LockHandle>> other = CompletableFuture
                    .supplyAsync(() -> locks.tryLock("settlement", Duration.ofMillis(100), null));
                assertThat(other.get(10, TimeUnit.SECONDS)).isEmpty();
            }
            assertThat(registry).hasNumberOfObservationsWithNameEqualTo("leasehold.lock.wait", 2)
                .hasNumberOfObservationsWithNameEqualTo("leasehold.lock.hold", 1)
                .hasAnObservation(observation -> observation.hasNameEqualTo("leasehold.lock.wait")
                    .hasLowCardinalityKeyValue("leasehold.lock.name", "settlement")
                    .hasLowCardinalityKeyValue("leasehold.lock.outcome", "timed_out")
                    .doesNotHaveError());
            assertThat(stops.values()).containsOnly(1);
        });
    }

    @Test
    void aWaitThatRedisFailedIsFailedWithTheError() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            redis.server().stop();
            Throwable thrown = catchThrowable(() -> locks.tryLock("show:9", Duration.ofMillis(200), null));
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.wait")
                .that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "failed")
                .hasError();
            assertThat(thrown).isNotNull();
            assertThat(registry).hasNumberOfObservationsWithNameEqualTo("leasehold.lock.hold", 0);
        });
    }

    @Test
    void anAsyncWaitTheCallerCancelledIsCancelled() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            try (LockHandle held = locks.lock("show:5", Duration.ZERO)) {
                CompletableFuture<Optional<LockHandle>> waiting = locks
                    .tryLockAsync("show:5", Duration.ofSeconds(30), null).toCompletableFuture();
                waiting.cancel(true);
                Await.until(Duration.ofSeconds(10), "the cancelled wait is stopped", () -> started.stream()
                    .filter(c -> c instanceof LockWaitContext).filter(stops::containsKey).count() == 2);
            }
            assertThat(registry).hasAnObservation(observation -> observation.hasNameEqualTo("leasehold.lock.wait")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "cancelled"));
            assertThat(stops.values()).containsOnly(1);
        });
    }

    @Test
    void aLeaseLostWhileHeldEndsTheHoldAsLostAndTheLaterCloseDoesNotEndItAgain() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            LockHandle expiring = locks.tryLock("lease:1", Duration.ZERO, Duration.ofMillis(150)).orElseThrow();
            Await.until(Duration.ofSeconds(10), "the hold ends", () -> started.stream()
                .filter(c -> c instanceof LockHoldContext).anyMatch(stops::containsKey));
            expiring.close();
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.hold")
                .that()
                .hasLowCardinalityKeyValue("leasehold.lock.name", "lease")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "lost")
                .hasHighCardinalityKeyValueWithKey("leasehold.lock.lost_reason");
            assertThat(stops.values()).containsOnly(1);
        });
    }

    @Test
    void anAnnotatedCallIsNamedByItsAnnotationEvenWhenTheNameHasAColon() {
        runner().withUserConfiguration(Tenants.class).run(context -> {
            context.getBean(Tenants.class).book(7);
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.wait")
                .that()
                .hasLowCardinalityKeyValue("leasehold.lock.name", "tenant:show")
                .hasHighCardinalityKeyValue("leasehold.lock.key", "tenant:show:7");
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.hold")
                .that()
                .hasLowCardinalityKeyValue("leasehold.lock.name", "tenant:show")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "released");
            // a programmatic call right after, on the same thread, is named by its key again
            context.getBean(LockService.class).withLock("tenant:show:8", Duration.ZERO, () -> null);
            assertThat(registry).hasAnObservation(observation -> observation.hasNameEqualTo("leasehold.lock.wait")
                .hasHighCardinalityKeyValue("leasehold.lock.key", "tenant:show:8")
                .hasLowCardinalityKeyValue("leasehold.lock.name", "tenant"));
        });
    }

    @Test
    void theApplicationsConventionBeansReplaceTheDefaults() {
        runner().withBean(LockWaitObservationConvention.class, () -> new DefaultLockWaitObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(LockWaitContext context) {
                return super.getLowCardinalityKeyValues(context).and("tenant", context.getKey().split(":")[1]);
            }
        }).withBean(LockHoldObservationConvention.class, () -> new DefaultLockHoldObservationConvention() {
            @Override
            public String getName() {
                return "app.lock.hold";
            }
        }).run(context -> {
            context.getBean(LockService.class).withLock("show:acme:1", Duration.ZERO, () -> null);
            assertThat(registry).hasObservationWithNameEqualTo("leasehold.lock.wait")
                .that()
                .hasLowCardinalityKeyValue("tenant", "acme")
                .hasLowCardinalityKeyValue("leasehold.lock.outcome", "acquired");
            assertThat(registry).hasObservationWithNameEqualTo("app.lock.hold");
            assertThat(registry).hasNumberOfObservationsWithNameEqualTo("leasehold.lock.hold", 0);
        });
    }

    @Test
    void withSpringBootsMetricsTheObservationsAreTimersBesideTheExistingMetersWhoseNamesKeepWorking() {
        springBootMetrics().run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(LockService.class).withLock("show:4", Duration.ZERO, () -> null);
            assertThat(meters.get("leasehold.lock.wait")
                .tag("leasehold.lock.name", "show")
                .tag("leasehold.lock.mode", "EXCLUSIVE")
                .tag("leasehold.lock.outcome", "acquired")
                .timer()
                .count()).isEqualTo(1);
            assertThat(meters.get("leasehold.lock.hold").tag("leasehold.lock.outcome", "released").timer().count())
                .isEqualTo(1);
            // the key is never a tag
            assertThat(meters.find("leasehold.lock.wait").tagKeys("leasehold.lock.key").meters()).isEmpty();
            // the meters of earlier versions, unchanged
            assertThat(meters.get("leasehold.lock.acquire").tag("result", "acquired").tag("mode", "EXCLUSIVE")
                .timer().count()).isEqualTo(1);
            assertThat(meters.get("leasehold.lock.held").tag("mode", "EXCLUSIVE").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void springBootsObservationPropertiesTurnThemOff() {
        springBootMetrics().withPropertyValues("management.observations.enable.leasehold=false").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(LockService.class).withLock("show:4", Duration.ZERO, () -> null);
            assertThat(meters.find("leasehold.lock.wait").meters()).isEmpty();
            assertThat(meters.find("leasehold.lock.hold").meters()).isEmpty();
            assertThat(meters.get("leasehold.lock.acquire").tag("result", "acquired").tag("mode", "EXCLUSIVE").timer()
                .count()).isEqualTo(1);
        });
    }

    @Test
    void withoutAnObservationRegistryNothingIsObserved() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdObservationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port())
            .run(context -> {
                assertThat(context).hasSingleBean(LockService.class).doesNotHaveBean(LockObservations.class);
            });
        runner().withPropertyValues("leasehold.enabled=false")
            .run(context -> assertThat(context).doesNotHaveBean(LockService.class).doesNotHaveBean(LockObservations.class));
    }

    static class Tenants {

        @DistributedLock(name = "tenant:show", key = "#id", waitTime = "1s")
        void book(long id) {
        }
    }
}
