package dev.leasehold.autoconfigure;

import dev.leasehold.LockService;
import dev.leasehold.engine.CompositeLockObserver;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.metrics.LockMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Distributed locks on the application's Redis ({@code spring.data.redis.*}). Every bean backs off when
 * the application defines its own.
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "leasehold.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LeaseholdProperties.class)
public class LeaseholdAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockEngineSettings leaseholdLockEngineSettings(LeaseholdProperties properties) {
        return properties.engineSettings();
    }

    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
            LeaseholdAutoConfiguration.class.getClassLoader());

    /**
     * On Lettuce (Spring Boot's default client), the fast path: every step pipelined on one connection. On
     * any other factory (Jedis), the same scripts through {@code RedisTemplate}, a few connections at a time;
     * replica acknowledgement works on both.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockServer leaseholdLockServer(RedisConnectionFactory connectionFactory, LockEngineSettings settings,
            LeaseholdProperties properties) {
        LeaseholdProperties.ReplicaAck ack = properties.getReplicaAck();
        if (ack.getReplicas() < 0 || ack.getTimeout() == null || ack.getTimeout().isNegative() || ack.getTimeout().isZero()) {
            throw new IllegalArgumentException("leasehold.replica-ack.replicas must be 0 or more and "
                    + "leasehold.replica-ack.timeout positive, were " + ack.getReplicas() + " and " + ack.getTimeout());
        }
        if (LETTUCE_PRESENT && LettuceServer.isLettuce(connectionFactory)) {
            return LettuceServer.create(connectionFactory, settings, ack);
        }
        return new RedisTemplateLockServer(connectionFactory, settings.keyPrefix(), RedisTemplateLockServer.DEFAULT_STRIPES,
                ack.getReplicas(), ack.getTimeout()).fairQueue(settings.fairQueue());
    }

    /** Only loaded when Lettuce is on the classpath (a Jedis application may exclude it). */
    private static final class LettuceServer {

        static boolean isLettuce(RedisConnectionFactory connectionFactory) {
            return connectionFactory instanceof LettuceConnectionFactory;
        }

        static LockServer create(RedisConnectionFactory connectionFactory, LockEngineSettings settings,
                LeaseholdProperties.ReplicaAck ack) {
            return new LettuceLockServer((LettuceConnectionFactory) connectionFactory, settings.keyPrefix(),
                    ack.getReplicas(), ack.getTimeout()).fairQueue(settings.fairQueue());
        }
    }

    @Bean
    @ConditionalOnMissingBean
    LockLostEventPublisher leaseholdLockLostEventPublisher(ApplicationEventPublisher publisher) {
        return new LockLostEventPublisher(publisher);
    }

    /** Every {@link LockObserver} bean is told, in order: events, metrics, and the application's own. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean({ LockEngine.class, LockService.class })
    DefaultLockEngine leaseholdLockEngine(LockServer server, LockEngineSettings settings,
            ObjectProvider<LockObserver> observers) {
        return new DefaultLockEngine(server, settings, new CompositeLockObserver(observers.orderedStream().toList()));
    }

    /**
     * Stops the engine, then closes the lock server, before the connection factory stops, so that shutdown
     * releases what is held and no connection of the server is left to the stopped client.
     */
    @Bean
    @ConditionalOnBean(DefaultLockEngine.class)
    LockEngineLifecycle leaseholdLockEngineLifecycle(DefaultLockEngine engine, ObjectProvider<LockServer> server,
            RedisConnectionFactory connectionFactory) {
        return new LockEngineLifecycle(engine, server.getIfUnique(), connectionFactory);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterBinder.class)
    static class MetricsConfiguration {

        /** A MeterBinder: Spring Boot binds it to the application's registry when there is one. */
        @Bean
        @ConditionalOnMissingBean
        LockMetrics leaseholdLockMetrics(ObjectProvider<DefaultLockEngine> engine) {
            return new LockMetrics(() -> {
                DefaultLockEngine current = engine.getIfAvailable();
                return current != null ? current.heldLockCount() : 0;
            }, () -> {
                DefaultLockEngine current = engine.getIfAvailable();
                return current != null ? current.waitingCount() : 0;
            });
        }
    }
}
