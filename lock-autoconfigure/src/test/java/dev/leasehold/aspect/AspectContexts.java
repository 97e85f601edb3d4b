package dev.leasehold.aspect;

import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.test.redis.TestRedisServer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Application contexts the way a user's app gets them from the starter: auto-configuration on a real Redis. */
final class AspectContexts {

    private AspectContexts() {
    }

    static ApplicationContextRunner on(TestRedisServer redis) {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    LeaseholdAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    "leasehold.wait-time=2s");
    }
}
