package dev.leasehold.actuator;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code leasehold} health indicator against a real redis-server that is stopped and started again. */
@Timeout(120)
class LeaseholdHealthTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdHealthAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "spring.data.redis.timeout=1s",
                    "leasehold.lease-time=3s", "leasehold.redis-timeout=500ms");
    }

    @Test
    void downWithDetailsWhileRedisIsGoneAndRenewalsFailThenUpAgain() {
        runner().run(context -> {
            HealthIndicator health = context.getBean("leaseholdHealthIndicator", HealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            LockHandle handle = context.getBean(LockService.class).lock("nightly-report", Duration.ZERO);

            redis.server().stop();
            // down at once by its PING; the renewal failure shows from the watchdog's next tick (every 1 s)
            Await.until(Duration.ofSeconds(10), "the health is down with the renewal failure", () -> {
                Health now = health.health();
                return now.getStatus().equals(Status.DOWN) && now.getDetails().get("renewalFailures") instanceof Long failures
                        && failures > 0;
            });
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            Map<String, Object> details = down.getDetails();
            assertThat((Long) details.get("renewalFailures")).isPositive();
            assertThat(details.get("locksAtRisk")).isEqualTo(1);
            assertThat(details.get("atRisk").toString()).contains("nightly-report");
            assertThat(details.get("heldLocks")).isEqualTo(1);

            redis.server().start();
            Await.until(Duration.ofSeconds(30), "the health is up again",
                    () -> health.health().getStatus().equals(Status.UP));
            // the restarted server kept no data, so the lock was lost: reported, not hidden
            Await.until(Duration.ofSeconds(10), "the lost lock is counted",
                    () -> ((Long) health.health().getDetails().get("lostLocks")) >= 1);
            handle.close();
        });
    }

    @Test
    void withNoLocksHeldAPingTellsAndAHealthyEngineCostsNoExtraRoundTrips() {
        runner().run(context -> {
            HealthIndicator health = context.getBean("leaseholdHealthIndicator", HealthIndicator.class);
            Health up = health.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            // the server by its own name and version (Valkey's redis_version is 7.2.4 whatever its version)
            assertThat(up.getDetails().get("server"))
                .isEqualTo(redis.server().serverName() + " " + redis.server().serverVersion());

            // while a watchdog lock is renewed, checks reuse what the watchdog learned
            LockHandle handle = context.getBean(LockService.class).lock("busy", Duration.ZERO);
            long pingsBefore = pings();
            for (int i = 0; i < 20; i++) {
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            }
            assertThat(pings() - pingsBefore).isLessThanOrEqualTo(1);
            handle.close();

            redis.server().stop();
            Health down = health.health();
            for (long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                    down.getStatus().equals(Status.UP) && System.nanoTime() < until;) {
                down = health.health(); // the last success may still be fresh for a moment
            }
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails().get("reason").toString()).contains("PING");

            redis.server().start();
            Await.until(Duration.ofSeconds(30), "the health is up again",
                    () -> health.health().getStatus().equals(Status.UP));
        });
    }

    @Test
    void theServerIsNamedByServerNameAndItsOwnVersion() {
        Properties valkey = new Properties();
        valkey.setProperty("redis_version", "7.2.4");
        valkey.setProperty("server_name", "valkey");
        valkey.setProperty("valkey_version", "8.0.1");
        assertThat(RedisServerIdentity.describe(valkey)).isEqualTo("valkey 8.0.1");
        Properties redis62 = new Properties();
        redis62.setProperty("redis_version", "6.2.6");
        assertThat(RedisServerIdentity.describe(redis62)).isEqualTo("redis 6.2.6");
        Properties clusterNode = new Properties();
        clusterNode.setProperty("127.0.0.1:7000.redis_version", "7.2.4");
        clusterNode.setProperty("127.0.0.1:7000.server_name", "valkey");
        clusterNode.setProperty("127.0.0.1:7000.valkey_version", "8.0.1");
        assertThat(RedisServerIdentity.describe(clusterNode)).isEqualTo("valkey 8.0.1");
    }

    @Test
    void canBeSwitchedOff() {
        runner().withPropertyValues("management.health.leasehold.enabled=false")
            .run(context -> assertThat(context).doesNotHaveBean(LeaseholdHealthIndicator.class));
    }

    private static long pings() {
        String info = redis.server().command("INFO", "commandstats");
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_ping:")) {
                return Long.parseLong(line.replaceAll("^cmdstat_ping:calls=(\\d+),.*$", "$1"));
            }
        }
        return 0;
    }
}
