package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.test.redis.TestRedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import dev.leasehold.engine.server.LockServer;

/**
 * Engines on a real server, each with its own connection factory (so two engines are two Redis clients,
 * as two JVMs would be), on the chosen kind of {@link LockServer}. Closes everything it made.
 */
public final class EngineFixture implements AutoCloseable {

    /** Which {@link LockServer} (and which Redis client under it) the engines use. */
    public enum ServerKind {
        /** {@link LettuceLockServer} on a {@link LettuceConnectionFactory}: Spring Boot's default. */
        LETTUCE,
        /** {@link RedisTemplateLockServer} on a pooled {@link JedisConnectionFactory}. */
        JEDIS
    }

    final TestRedisServer redis;

    final ServerKind kind;

    final List<LockHandle> lost = new CopyOnWriteArrayList<>();

    private final List<AutoCloseable> resources = new ArrayList<>();

    EngineFixture(TestRedisServer redis) {
        this(redis, ServerKind.LETTUCE);
    }

    public EngineFixture(TestRedisServer redis, ServerKind kind) {
        this.redis = redis;
        this.kind = kind;
    }

    public static LockEngineSettings fastSettings() {
        return new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofMillis(500), Duration.ofMillis(200));
    }

    RedisConnectionFactory connectionFactory() {
        return connectionFactory(Duration.ofSeconds(5), null, null);
    }

    /**
     * A factory of this fixture's kind.
     * @param commandTimeout the driver's own timeout ({@code spring.data.redis.timeout})
     * @param user an ACL user, or null for the default user
     */
    public RedisConnectionFactory connectionFactory(Duration commandTimeout, String user, String password) {
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(redis.host(), redis.port());
        if (user != null) {
            server.setUsername(user);
            server.setPassword(password);
        }
        if (kind == ServerKind.JEDIS) {
            // what Spring Boot builds for spring.data.redis.client-type=jedis: pooled, the timeout on reads
            JedisClientConfiguration client = JedisClientConfiguration.builder()
                .readTimeout(commandTimeout)
                .connectTimeout(commandTimeout)
                .usePooling()
                .build();
            JedisConnectionFactory factory = new JedisConnectionFactory(server, client);
            factory.afterPropertiesSet();
            factory.start();
            resources.add(0, factory::destroy);
            return factory;
        }
        LettuceClientConfiguration client = LettuceClientConfiguration.builder()
            .commandTimeout(commandTimeout)
            .clientOptions(ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled(commandTimeout)).build())
            .build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(server, client);
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        return factory;
    }

    LockServer server(String keyPrefix) {
        return server(connectionFactory(), keyPrefix);
    }

    /** Closes the server with the rest. */
    public <S extends LockServer> S track(S server) {
        resources.add(0, server);
        return server;
    }

    /** The server that auto-configuration picks for this factory. */
    public LockServer server(RedisConnectionFactory factory, String keyPrefix) {
        LockServer server = factory instanceof LettuceConnectionFactory lettuce ? new LettuceLockServer(lettuce, keyPrefix)
                : new RedisTemplateLockServer(factory, keyPrefix);
        resources.add(0, server);
        return server;
    }

    DefaultLockEngine engine() {
        return engine(fastSettings());
    }

    DefaultLockEngine engine(LockEngineSettings settings) {
        return engine(server(settings.keyPrefix()), settings);
    }

    DefaultLockEngine engine(LockServer server, LockEngineSettings settings) {
        DefaultLockEngine engine = new DefaultLockEngine(server, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                EngineFixture.this.lost.add(handle);
            }
        });
        resources.add(0, engine);
        return engine;
    }

    @Override
    public void close() {
        for (AutoCloseable resource : resources) {
            try {
                resource.close();
            }
            catch (Exception ex) {
                // best effort: the server goes away after the class anyway
            }
        }
        resources.clear();
    }
}
