package dev.leasehold.autoconfigure;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.leasehold.LockHandle;
import dev.leasehold.LockLostEvent;
import dev.leasehold.LockService;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class LeaseholdAutoConfigurationTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void springDataRedisSettingsAloneGiveAWorkingLockService() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(LockService.class);
            LockService locks = context.getBean(LockService.class);
            try (LockHandle handle = locks.lock("order:42", Duration.ofSeconds(1))) {
                assertThat(redis.server().command("EXISTS", "lock:{order:42}")).isEqualTo("1");
            }
            assertThat(locks.isLocked("order:42")).isFalse();
        });
    }

    @Test
    void lettuceSpringBootsDefaultClientGetsThePipelinedServer() {
        runner().run(context -> assertThat(context.getBean(LockServer.class)).isInstanceOf(LettuceLockServer.class));
    }

    @Test
    void aJedisConnectionFactoryGivesAWorkingLockServiceOnTheTemplateServer() throws Exception {
        ApplicationContextRunner jedis = runner().withPropertyValues("spring.data.redis.client-type=jedis");
        jedis.run(holderContext -> jedis.run(waiterContext -> {
            assertThat(holderContext.getBean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
            assertThat(holderContext.getBean(LockServer.class)).isInstanceOf(RedisTemplateLockServer.class);
            LockService holder = holderContext.getBean(LockService.class);
            DefaultLockEngine waiter = waiterContext.getBean(DefaultLockEngine.class);
            LockHandle held = holder.lock("jedis:1", Duration.ofSeconds(1));
            assertThat(redis.server().command("EXISTS", "lock:{jedis:1}")).isEqualTo("1");
            assertThat(waiter.isLocked("jedis:1")).isTrue();
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                try (LockHandle handle = waiter.lock("jedis:1", Duration.ofSeconds(20))) {
                    return System.nanoTime();
                }
            });
            Await.until(Duration.ofSeconds(10), "the other application waits", () -> waiter.waitingCount() == 1);
            long releasedAt = System.nanoTime();
            held.close();
            // woken by the release message (through the listener container), not by the 30 s lease
            assertThat((acquiredAt.get(20, TimeUnit.SECONDS) - releasedAt) / 1_000_000).isLessThan(900);
            assertThat(holder.isLocked("jedis:1")).isFalse();
        }));
    }

    @Test
    void propertiesShapeTheEngine() {
        runner().withPropertyValues("leasehold.key-prefix=app1:locks:", "leasehold.lease-time=45s",
                "leasehold.redis-timeout=750ms", "leasehold.wait-time=1s")
            .run(context -> {
                LockEngineSettings settings = context.getBean(LockEngineSettings.class);
                assertThat(settings.leaseTime()).isEqualTo(Duration.ofSeconds(45));
                assertThat(settings.redisTimeout()).isEqualTo(Duration.ofMillis(750));
                assertThat(context.getBean(LeaseholdProperties.class).getWaitTime()).isEqualTo(Duration.ofSeconds(1));
                try (LockHandle handle = context.getBean(LockService.class).lock("job", Duration.ZERO)) {
                    assertThat(redis.server().command("PTTL", "app1:locks:{job}")).satisfies(
                            ttl -> assertThat(Long.parseLong(ttl)).isBetween(40_000L, 45_000L));
                }
            });
    }

    @Test
    void aLostLeaseIsPublishedAsAnApplicationEvent() {
        runner().withUserConfiguration(LostLocks.class).run(context -> {
            LockService locks = context.getBean(LockService.class);
            Optional<LockHandle> handle = locks.tryLock("short", Duration.ZERO, Duration.ofMillis(200));
            assertThat(handle).isPresent();
            List<LockLostEvent> events = context.getBean(LostLocks.class).events;
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (events.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(events).hasSize(1);
            assertThat(events.get(0).getHandle().key()).isEqualTo("short");
            assertThat(events.get(0).getHandle().isHeld()).isFalse();
            handle.get().close();
        });
    }

    @Test
    void disabledRemovesTheBeans() {
        runner().withPropertyValues("leasehold.enabled=false")
            .run(context -> assertThat(context).hasSingleBean(RedisConnectionFactory.class)
                .doesNotHaveBean(LockService.class)
                .doesNotHaveBean(LeaseholdProperties.class));
    }

    @Test
    void withoutRedisThereIsNoLockService() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaseholdAutoConfiguration.class))
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class));
    }

    @Test
    void theApplicationsOwnLockServiceWins() {
        runner().withUserConfiguration(OwnLockService.class).run(context -> {
            assertThat(context).hasSingleBean(LockService.class);
            assertThat(context.getBean(LockService.class)).isSameAs(context.getBean("myLocks"));
            assertThat(context).doesNotHaveBean(DefaultLockEngine.class);
        });
    }

    @Test
    void everyPropertyHasMetadataWithADescription() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("generated configuration metadata").isNotNull();
            String metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String property : List.of("leasehold.enabled", "leasehold.key-prefix", "leasehold.wait-time",
                    "leasehold.lease-time", "leasehold.redis-timeout")) {
                assertThat(metadata).contains("\"name\": \"" + property + "\"");
            }
            assertThat(metadata).contains("\"defaultValue\": \"30s\"").contains("\"defaultValue\": \"lock:\"");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LostLocks implements ApplicationListener<LockLostEvent> {

        final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

        @Override
        public void onApplicationEvent(LockLostEvent event) {
            events.add(event);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLockService {

        @Bean
        LockService myLocks() {
            return new LockService() {
                @Override
                public Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime) {
                    return Optional.empty();
                }

                @Override
                public LockHandle lock(String key, Duration waitTime) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public <T> T withLock(String key, Duration waitTime, Supplier<T> action) {
                    return action.get();
                }

                @Override
                public boolean isLocked(String key) {
                    return false;
                }
            };
        }
    }
}
