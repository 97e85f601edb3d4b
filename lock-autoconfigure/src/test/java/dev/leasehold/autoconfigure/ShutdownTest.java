package dev.leasehold.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

@Timeout(60)
class ShutdownTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static long leaseholdThreads() {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().startsWith("leasehold-"))
            .count();
    }

    @Test
    void closingTheContextFreesWaitersAtOnceAndReleasesHeldLocksWhileRedisStillAnswers() {
        long threadsBefore = leaseholdThreads();
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port())
            .run(context -> {
                LockService locks = context.getBean(LockService.class);
                DefaultLockEngine engine = context.getBean(DefaultLockEngine.class);
                LockHandle held = locks.lock("held", Duration.ZERO); // a watchdog lease of 30 s
                // a thread of this JVM queued behind it, and one asleep until another client's lock is released
                CompletableFuture<LockHandle> localWaiter = CompletableFuture.supplyAsync(() -> locks.lock("held",
                        Duration.ofSeconds(15)));
                redis.server().command("SET", "lock:{elsewhere}", "another-client", "PX", "30000");
                CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> locks.lock("elsewhere",
                        Duration.ofSeconds(15)));
                Await.until(Duration.ofSeconds(5), "the waiter waits", () -> engine.waitingCount() == 1);

                long closingAt = System.nanoTime();
                context.close();
                for (CompletableFuture<LockHandle> each : java.util.List.of(waiter, localWaiter)) {
                    Throwable failure = catchThrowable(() -> each.get(10, TimeUnit.SECONDS));
                    long waiterFreedMillis = (System.nanoTime() - closingAt) / 1_000_000;
                    // before the fix: the waiter retried against a stopped factory for 14 s of its 15 s
                    assertThat(waiterFreedMillis).isLessThan(5000);
                    assertThat(failure).hasCauseInstanceOf(LockAcquisitionException.class)
                        .cause().hasMessageContaining("shutting down");
                }
                // before the fix: the key stayed until the end of its 30 s lease
                assertThat(redis.server().command("EXISTS", "lock:{held}")).isEqualTo("0");
                assertThat(held.isHeld()).isFalse();
                held.close();
            });
        Await.until(Duration.ofSeconds(5), "no Leasehold thread is left running", () -> leaseholdThreads() <= threadsBefore);
    }
}
