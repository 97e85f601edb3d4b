package dev.leasehold.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.actuator.LeaseholdEndpoint;
import dev.leasehold.actuator.LeaseholdEndpointAutoConfiguration;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.logs.ExpectedLog;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class LeaseholdQuorumAutoConfigurationTest {

    /** The application's own Redis (spring.data.redis): it must hold no lock keys in quorum mode. */
    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static final List<TestRedisServer> nodes = new ArrayList<>();

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < 3; i++) {
            nodes.add(TestRedisServers.startOwn(List.of(), Map.of()));
        }
    }

    @AfterAll
    static void stopNodes() {
        nodes.forEach(TestRedisServer::close);
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    LeaseholdQuorumAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdEndpointAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "management.endpoints.web.exposure.include=*");
    }

    private static String nodeList() {
        return String.join(",", nodes.stream().map(TestRedisServer::url).toList());
    }

    @Test
    void threeNodesTakeEveryLockOnTheQuorumAndNoneOnSpringDataRedis() {
        runner().withPropertyValues("leasehold.quorum.nodes=" + nodeList(), "leasehold.quorum.clock-drift-factor=0.02")
            .run(context -> {
                assertThat(context).hasSingleBean(LockServer.class);
                assertThat(context.getBean(LockServer.class)).isInstanceOf(QuorumLockServer.class);
                LockService locks = context.getBean(LockService.class);
                try (LockHandle handle = locks.lock("order:7", Duration.ofSeconds(2))) {
                    // granted by a majority; the last node's grant may land just after
                    dev.leasehold.engine.Await.until(Duration.ofSeconds(2), "every node holds the key",
                            () -> nodes.stream().allMatch(node -> "1".equals(node.command("EXISTS", "lock:{order:7}"))));
                    assertThat(redis.server().command("EXISTS", "lock:{order:7}")).isEqualTo("0");
                    LeaseholdEndpoint.LocksDescriptor described = context.getBean(LeaseholdEndpoint.class).locks();
                    dev.leasehold.engine.server.KeyState state = context.getBean(LeaseholdEndpoint.class)
                        .key(new String[] { "order:7" });
                    assertThat(state.held()).isTrue();
                    assertThat(state.fencingCounter()).isEqualTo(handle.fencingToken());
                    assertThat(described.quorum().majority()).isEqualTo(2);
                    assertThat(described.quorum().nodes()).hasSize(3)
                        .allSatisfy(node -> assertThat(node.answering() && node.counted()).isTrue());
                    // the validity honours the drift allowance: 30 s lease less 2 % less 2 ms
                    assertThat(described.held()).singleElement()
                        .satisfies(held -> assertThat(held.leaseLeftMillis()).isBetween(28_000L, 29_398L));
                }
                MeterRegistry registry = new SimpleMeterRegistry();
                context.getBean(dev.leasehold.metrics.QuorumMetrics.class).bindTo(registry);
                String first = nodes.get(0).host() + ":" + nodes.get(0).port();
                // counted when its answer comes, which on a loaded machine may be after the majority decided
                dev.leasehold.engine.Await.until(java.time.Duration.ofSeconds(10), "the first node's grant counted",
                        () -> registry.get("leasehold.quorum.node.acquires").tags("node", first, "result", "granted")
                            .functionCounter().count() == 1);
                // a node counts once a probe reached it (on a loaded machine the first probe may come late)
                dev.leasehold.engine.Await.until(java.time.Duration.ofSeconds(10), "the first node counts",
                        () -> registry.get("leasehold.quorum.node.counted").tag("node", first).gauge().value() == 1);
            });
    }

    @Test
    void oneOrTwoNodesFailTheStartupNamingTheProperty() {
        String two = nodes.get(0).url() + "," + nodes.get(1).url();
        runner().withPropertyValues("leasehold.quorum.nodes=" + two).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure())).isInstanceOfSatisfying(
                    InvalidConfigurationPropertyValueException.class,
                    ex -> assertThat(ex.getName()).isEqualTo("leasehold.quorum.nodes"));
        });
        runner().withPropertyValues("leasehold.quorum.nodes=" + nodes.get(0).url())
            .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void aFenceRetentionMakesTheCountersExpireAndUnderAMinuteFailsTheStartup() {
        runner().withPropertyValues("leasehold.quorum.nodes=" + nodeList(), "leasehold.quorum.fence-retention=10m")
            .run(context -> {
                try (LockHandle handle = context.getBean(LockService.class).lock("retained:1", Duration.ofSeconds(2))) {
                    // tokens start at the client's clock in µs, not at 1
                    assertThat(handle.fencingToken()).isGreaterThan(System.currentTimeMillis() * 1000 - 60_000_000L);
                }
                dev.leasehold.engine.Await.until(Duration.ofSeconds(2), "a majority's counters expire within 10 minutes",
                        () -> nodes.stream().filter(node -> {
                            long ttl = Long.parseLong(node.command("PTTL", "lock:{retained:1}:fence"));
                            return ttl > 0 && ttl <= 600_000;
                        }).count() >= 2);
            });
        runner().withPropertyValues("leasehold.quorum.nodes=" + nodeList(), "leasehold.quorum.fence-retention=30s")
            .run(context -> assertThat(rootCause(context.getStartupFailure())).isInstanceOfSatisfying(
                    InvalidConfigurationPropertyValueException.class,
                    ex -> assertThat(ex.getName()).isEqualTo("leasehold.quorum.fence-retention")));
    }

    @Test
    void aNodeUrlThatDoesNotParseFailsTheStartupNamingIt() {
        runner().withPropertyValues("leasehold.quorum.nodes[0]=" + nodes.get(0).url(),
                "leasehold.quorum.nodes[1]=" + nodes.get(1).url(), "leasehold.quorum.nodes[2]=http://secret@example:80")
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(rootCause(context.getStartupFailure())).isInstanceOfSatisfying(
                        InvalidConfigurationPropertyValueException.class, ex -> {
                            assertThat(ex.getName()).isEqualTo("leasehold.quorum.nodes[2]");
                            assertThat(ex.getMessage()).doesNotContain("secret");
                        });
            });
    }

    @Test
    void theSameServerListedTwiceFailsTheStartup() {
        runner().withPropertyValues("leasehold.quorum.nodes=" + nodes.get(0).url() + "," + nodes.get(1).url() + ","
                + nodes.get(0).url())
            .run(context -> assertThat(rootCause(context.getStartupFailure())).isInstanceOfSatisfying(
                    InvalidConfigurationPropertyValueException.class,
                    ex -> assertThat(ex.getName()).isEqualTo("leasehold.quorum.nodes[2]")));
    }

    @Test
    void theStartupFailureReportNamesThePropertyAndTheFix() {
        // the report Spring Boot logs (at ERROR) for the user, kept off the build's output: this failure is expected
        try (ExpectedLog report = ExpectedLog.capture("org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter")) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(QuorumApp.class).web(WebApplicationType.NONE)
                .properties("leasehold.quorum.nodes=" + nodes.get(0).url() + "," + nodes.get(1).url(),
                        "spring.data.redis.port=" + redis.server().port(), "spring.main.banner-mode=off")
                .run()
                .close()).isNotNull();
            assertThat(report.text()).contains("ERROR \n\n***************************\nAPPLICATION FAILED TO START")
                .contains("leasehold.quorum.nodes")
                .contains("3 or more independent Redis servers");
        }
    }

    private static Throwable rootCause(Throwable error) {
        Throwable current = error;
        while (current.getCause() != null && current.getCause() != current) {
            current = current.getCause();
        }
        return current;
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LeaseholdQuorumAutoConfiguration.class,
            LeaseholdAutoConfiguration.class })
    static class QuorumApp {
    }
}
