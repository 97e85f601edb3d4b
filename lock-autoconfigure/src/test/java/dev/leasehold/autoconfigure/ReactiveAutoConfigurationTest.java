package dev.leasehold.autoconfigure;

import java.time.Duration;

import dev.leasehold.LockService;
import dev.leasehold.ReactiveLockService;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** A {@link ReactiveLockService} bean exactly when Reactor is on the class path, over the application's {@link LockService}. */
@Timeout(60)
class ReactiveAutoConfigurationTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class,
                    LeaseholdReactiveAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void withReactorAReactiveLockServiceLocksThroughTheLockService() {
        runner().run(context -> {
            ReactiveLockService reactive = context.getBean(ReactiveLockService.class);
            Integer result = reactive.withLock("reactive:1", Duration.ofSeconds(1), Mono.fromCallable(
                    () -> "1".equals(redis.server().command("EXISTS", "lock:{reactive:1}")) ? 1 : 0))
                .block(Duration.ofSeconds(10));
            assertThat(result).as("held while the Mono ran").isEqualTo(1);
            assertThat(context.getBean(LockService.class).isLocked("reactive:1")).isFalse();
        });
    }

    @Test
    void withoutReactorThereIsNone() {
        runner().withClassLoader(new FilteredClassLoader(Mono.class))
            .run(context -> assertThat(context).hasSingleBean(LockService.class)
                .doesNotHaveBean(ReactiveLockService.class));
    }

    @Test
    void backsOffForTheApplicationsOwn() {
        runner().withUserConfiguration(Own.class)
            .run(context -> assertThat(context).getBean(ReactiveLockService.class)
                .isSameAs(context.getBean("mine")));
    }

    @Configuration(proxyBeanMethods = false)
    static class Own {

        @Bean
        ReactiveLockService mine(LockService lockService) {
            return new ReactiveLockService(lockService);
        }
    }
}
