package dev.leasehold.engine.redis;

import java.util.Objects;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * The connection factory a release container subscribes through. Mostly the application's own; but for a
 * Jedis factory, each container gets a companion of its own (same server, credentials, TLS and timeouts,
 * no pool configured): Jedis hands a subscription's connection back to its pool when Redis refuses the
 * subscription (an ACL without channel rights) with replies still unread on it, and whoever borrows it
 * next, a lock step or the container that takes over, would read them as its own. The companion is
 * closed with its container.
 */
final class SubscriptionConnectionFactory {

    private static final Log logger = LogFactory.getLog(SubscriptionConnectionFactory.class);

    private static final boolean JEDIS_PRESENT = ClassUtils.isPresent(
            "org.springframework.data.redis.connection.jedis.JedisConnectionFactory",
            SubscriptionConnectionFactory.class.getClassLoader())
            && ClassUtils.isPresent("redis.clients.jedis.Jedis", SubscriptionConnectionFactory.class.getClassLoader());

    private SubscriptionConnectionFactory() {
    }

    /** The factory to subscribe through: {@code factory} itself, or a new companion to {@link #release}. */
    static RedisConnectionFactory of(RedisConnectionFactory factory) {
        if (JEDIS_PRESENT) {
            RedisConnectionFactory companion = Jedis.unpooledCompanion(factory);
            if (companion != null) {
                return companion;
            }
        }
        return factory;
    }

    /** Closes what {@link #of} made for {@code original}. */
    static void release(RedisConnectionFactory used, RedisConnectionFactory original) {
        if (used != original && used instanceof DisposableBean disposable) {
            try {
                disposable.destroy();
            }
            catch (Exception ex) {
                logger.debug("Closing the subscription connection factory failed", ex);
            }
        }
    }

    /** Only loaded when Jedis is on the classpath. */
    private static final class Jedis {

        static @Nullable RedisConnectionFactory unpooledCompanion(RedisConnectionFactory factory) {
            if (!(factory instanceof JedisConnectionFactory jedis) || jedis.isRedisClusterAware()) {
                return null;
            }
            JedisClientConfiguration source = jedis.getClientConfiguration();
            JedisClientConfiguration.JedisClientConfigurationBuilder builder = JedisClientConfiguration.builder();
            if (source.isUseSsl()) {
                JedisClientConfiguration.JedisSslClientConfigurationBuilder ssl = builder.useSsl();
                source.getSslSocketFactory().ifPresent(ssl::sslSocketFactory);
                source.getSslParameters().ifPresent(ssl::sslParameters);
                source.getHostnameVerifier().ifPresent(ssl::hostnameVerifier);
            }
            source.getClientName().ifPresent(builder::clientName);
            source.getClientConfigCustomizer().ifPresent(builder::customizeClientConfig);
            source.getClientCustomizer().ifPresent(builder::customizeClient);
            JedisClientConfiguration client = builder.connectTimeout(source.getConnectTimeout())
                .readTimeout(source.getReadTimeout())
                .build();
            JedisConnectionFactory companion = jedis.isRedisSentinelAware()
                    ? new JedisConnectionFactory(Objects.requireNonNull(jedis.getSentinelConfiguration()), client)
                    : new JedisConnectionFactory(Objects.requireNonNull(jedis.getStandaloneConfiguration()), client);
            companion.afterPropertiesSet();
            companion.start();
            return companion;
        }
    }
}
