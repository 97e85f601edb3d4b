package dev.leasehold.autoconfigure;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.test.redis.RedisServerExtension;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * How long locking fails after Redis comes back, with Lettuce's default reconnect delay (exponential, up to 30 s)
 * and with a short bounded one (docs/failure-modes.md). Not in the normal build:
 * {@code ./mvnw -B -q -pl lock-autoconfigure -am test -Dtest=ReconnectDelayMeasurement
 * -Dsurefire.failIfNoSpecifiedTests=false -Dleasehold.reconnect-measurement=true}
 */
@EnabledIfSystemProperty(named = "leasehold.reconnect-measurement", matches = "true")
class ReconnectDelayMeasurement {

    /** How long Redis stays down: the default back-off has doubled its delay many times by then. */
    private static final Duration OUTAGE = Duration.ofSeconds(Long.getLong("leasehold.reconnect-measurement.outage", 10));

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void lockingAgainAfterARestart() throws Exception {
        for (int round = 1; round <= 2; round++) {
            System.out.printf("round %d: Lettuce's default reconnect delay: locking again %d ms after Redis came back%n",
                    round, millisUntilLockingWorksAfterARestart(false));
            System.out.printf("round %d: reconnect delay at most 1 s: locking again %d ms after Redis came back%n",
                    round, millisUntilLockingWorksAfterARestart(true));
        }
    }

    private long millisUntilLockingWorksAfterARestart(boolean boundedDelay) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "spring.data.redis.timeout=1s",
                    "leasehold.redis-timeout=1s");
        if (boundedDelay) {
            runner = runner.withBean(ClientResourcesBuilderCustomizer.class, () -> resources -> resources
                .reconnectDelay(Delay.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2, java.util.concurrent.TimeUnit.MILLISECONDS)));
        }
        long[] millis = new long[1];
        runner.run(context -> {
            LockService locks = context.getBean(LockService.class);
            locks.withLock("reconnect", Duration.ofSeconds(5), () -> { });
            redis.server().stop();
            // the outage itself: Redis is down for this long, whatever the client does meanwhile
            long downUntil = System.nanoTime() + OUTAGE.toNanos();
            while (System.nanoTime() < downUntil) {
                try {
                    locks.tryLock("reconnect", Duration.ZERO, null).ifPresent(LockHandle::close);
                }
                catch (RuntimeException expected) {
                    // the calls fail while Redis is down: the client keeps trying to reconnect meanwhile
                }
                java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            }
            redis.server().start();
            long back = System.nanoTime();
            long deadline = back + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    Optional<LockHandle> lock = locks.tryLock("reconnect", Duration.ZERO, null);
                    if (lock.isPresent()) {
                        lock.get().close();
                        millis[0] = (System.nanoTime() - back) / 1_000_000;
                        return;
                    }
                }
                catch (RuntimeException stillDown) {
                    // not reconnected yet
                }
                java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(10).toNanos()); // the measurement's resolution
            }
            throw new AssertionError("locking did not work again within 90 s of the restart");
        });
        return millis[0];
    }
}
