package dev.leasehold.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Integration's leader election on the auto-configured {@link LockRegistry}: application contexts
 * (each its own Redis client, as separate instances would be) elect exactly one leader, and another takes
 * over when the leader's context closes.
 */
@Timeout(120)
class LeaderElectionTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    /** Every grant and revoke of every node, in order. */
    static final List<String> events = new CopyOnWriteArrayList<>();

    private final List<ConfigurableApplicationContext> nodes = new ArrayList<>();

    @AfterEach
    void closeNodes() {
        nodes.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void exactlyOneLeaderAtATimeAndAnotherTakesOverWhenTheLeaderCloses() {
        nodes.add(node("a"));
        nodes.add(node("b"));
        nodes.add(node("c"));
        for (ConfigurableApplicationContext node : nodes) {
            assertThat(node.getBean(LockRegistry.class)).isInstanceOf(LeaseholdLockRegistry.class);
        }
        List<Long> handOverMillis = new ArrayList<>();
        List<ConfigurableApplicationContext> running = new ArrayList<>(nodes);
        while (running.size() > 1) {
            Await.until(Duration.ofSeconds(20), "one node leads", () -> leaderOf(running) != null);
            // a steady state of several heartbeats: always exactly one leader
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < until) {
                assertThat(running.stream().filter(LeaderElectionTest::isLeader).count()).isEqualTo(1);
                sleep(20);
            }
            ConfigurableApplicationContext leader = leaderOf(running);
            running.remove(leader);
            long closing = System.nanoTime();
            leader.close();
            Await.until(Duration.ofSeconds(20), "another node takes over", () -> leaderOf(running) != null);
            handOverMillis.add((System.nanoTime() - closing) / 1_000_000);
        }
        System.out.println("Leader hand-over after the leader's context closed (ms): " + handOverMillis
                + "; events " + events);
        // one grant per node, each only after the previous leader closed (Spring Integration unlocks before
        // it calls onRevoked, so its callbacks may overlap for a moment; the sampling above is the check)
        assertThat(events.stream().filter(event -> event.startsWith("granted")).distinct().count()).isEqualTo(3);
        assertThat(events.stream().filter(event -> event.startsWith("granted")).count()).isEqualTo(3);
        // a take-over is woken by the release, far below the 30 s lease a crash would cost
        assertThat(handOverMillis).allSatisfy(millis -> assertThat(millis).isLessThan(10_000));
    }

    private static ConfigurableApplicationContext leaderOf(List<ConfigurableApplicationContext> running) {
        return running.stream().filter(LeaderElectionTest::isLeader).findFirst().orElse(null);
    }

    private static boolean isLeader(ConfigurableApplicationContext node) {
        return node.isActive() && node.getBean(LockRegistryLeaderInitiator.class).getContext().isLeader();
    }

    private ConfigurableApplicationContext node(String name) {
        return new SpringApplicationBuilder(LeaderNode.class).web(WebApplicationType.NONE)
            .properties("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "node.name=" + name,
                    "spring.main.banner-mode=off")
            .run();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class,
            LeaseholdLockRegistryAutoConfiguration.class })
    static class LeaderNode {

        @Bean
        LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> registry, Environment environment) {
            String name = environment.getProperty("node.name");
            return new LockRegistryLeaderInitiator(registry, new DefaultCandidate(name, "leader") {
                @Override
                public void onGranted(Context context) {
                    events.add("granted " + name);
                }

                @Override
                public void onRevoked(Context context) {
                    events.add("revoked " + name);
                }
            });
        }
    }
}
