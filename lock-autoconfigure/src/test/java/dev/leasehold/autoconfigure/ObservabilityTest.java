package dev.leasehold.autoconfigure;

import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.actuator.LeaseholdEndpoint;
import dev.leasehold.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class ObservabilityTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, MetricsAutoConfiguration.class,
                    dev.leasehold.actuator.LeaseholdEndpointAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void locksShowUpInTheApplicationsMeterRegistry() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            LockHandle held = locks.lock("metered", Duration.ZERO);
            assertThat(registry.get("leasehold.lock.active").gauge().value()).isEqualTo(1.0);
            locks.tryLock("metered", Duration.ZERO, null).orElseThrow().close(); // re-entry: not counted
            var other = context.getBean(LockService.class);
            Thread contender = new Thread(() -> other.tryLock("metered", Duration.ofMillis(50), null));
            contender.start();
            contender.join(5000);
            held.close();

            assertThat(registry.get("leasehold.lock.acquire").tag("result", "acquired").tag("mode", "EXCLUSIVE")
                .timer().count()).isEqualTo(1);
            assertThat(registry.get("leasehold.lock.acquire").tag("result", "timeout").timer().count()).isEqualTo(1);
            assertThat(registry.get("leasehold.lock.held").tag("mode", "EXCLUSIVE").timer().count()).isEqualTo(1);
            assertThat(registry.get("leasehold.lock.active").gauge().value()).isZero();

            LockHandle expiring = locks.tryLock("short", Duration.ZERO, Duration.ofMillis(100)).orElseThrow();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (registry.get("leasehold.lock.lost").counter().count() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(registry.get("leasehold.lock.lost").counter().count()).isEqualTo(1.0);
            expiring.close();
        });
    }

    @Test
    void theEndpointListsTheLocksThisInstanceHolds() {
        runner().withConfiguration(AutoConfigurations.of(
                org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration.class))
            .withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=leasehold")
            .run(context -> {
                LeaseholdEndpoint endpoint = context.getBean(LeaseholdEndpoint.class);
                try (LockHandle handle = context.getBean(LockService.class).lock("visible", Duration.ZERO)) {
                    LeaseholdEndpoint.LocksDescriptor locks = endpoint.locks();
                    assertThat(locks.keyPrefix()).isEqualTo("lock:");
                    assertThat(locks.held()).singleElement().satisfies(lock -> {
                        assertThat(lock.key()).isEqualTo("visible");
                        assertThat(lock.fencingToken()).isEqualTo(handle.fencingToken());
                        assertThat(lock.renewed()).isTrue();
                        assertThat(lock.leaseLeftMillis()).isBetween(1L, 30_000L);
                        assertThat(lock.ownerThread()).isEqualTo(Thread.currentThread().getName());
                    });
                }
                assertThat(endpoint.locks().held()).isEmpty();
            });
    }

    @Test
    void theEndpointShowsOneKeyAsRedisSeesItWithoutTheOwnerToken() {
        runner().withConfiguration(AutoConfigurations.of(
                org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration.class))
            .withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=leasehold")
            .run(context -> {
                LeaseholdEndpoint endpoint = context.getBean(LeaseholdEndpoint.class);
                try (LockHandle handle = context.getBean(LockService.class).lock("show/7:a", Duration.ZERO)) {
                    var state = endpoint.key(new String[] { "show", "7:a" });
                    assertThat(state.key()).isEqualTo("show/7:a");
                    assertThat(state.held()).isTrue();
                    assertThat(state.mode()).isEqualTo(dev.leasehold.LockMode.EXCLUSIVE);
                    // the grant reserved the tokens behind its own for local hand-offs
                    assertThat(state.fencingCounter()).isBetween(handle.fencingToken(),
                            handle.fencingToken() + dev.leasehold.engine.server.FairQueue.DEFAULTS.tokenBlock() - 1);
                    assertThat(state.leaseLeftMillis()).isBetween(1L, 30_000L);
                }
                assertThat(endpoint.key(new String[] { "show/7:a" }).held()).isFalse();
            });
    }

    @Test
    void theEndpointIsAbsentUnlessExposed() {
        runner().withConfiguration(AutoConfigurations.of(
                org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration.class))
            .run(context -> assertThat(context).doesNotHaveBean(LeaseholdEndpoint.class));
    }
}
