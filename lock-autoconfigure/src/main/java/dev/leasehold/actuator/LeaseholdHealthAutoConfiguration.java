package dev.leasehold.actuator;

import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.quorum.QuorumLockServer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The {@code leasehold} health indicator, when Spring Boot's health support is present; off with
 * {@code management.health.leasehold.enabled=false}.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(DefaultLockEngine.class)
@ConditionalOnEnabledHealthIndicator("leasehold")
public class LeaseholdHealthAutoConfiguration {

    /** A LockObserver: the engine tells it about every round trip (it is created before the engine). */
    @Bean
    @ConditionalOnMissingBean
    RedisHealthObserver leaseholdRedisHealthObserver() {
        return new RedisHealthObserver();
    }

    @Bean
    @ConditionalOnMissingBean(name = "leaseholdHealthIndicator")
    LeaseholdHealthIndicator leaseholdHealthIndicator(DefaultLockEngine engine, RedisHealthObserver observer,
            ObjectProvider<RedisConnectionFactory> connectionFactory, ObjectProvider<QuorumLockServer> quorum) {
        // in quorum mode the locks are on the quorum's nodes, not on the application's Redis
        RedisConnectionFactory factory = quorum.getIfAvailable() == null ? connectionFactory.getIfUnique() : null;
        return new LeaseholdHealthIndicator(engine, observer, factory != null ? new RedisServerIdentity(factory) : null);
    }
}
