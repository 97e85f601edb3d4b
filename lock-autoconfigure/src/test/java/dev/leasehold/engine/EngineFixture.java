package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.test.redis.TestRedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Engines on a real server, each with its own connection factory (so two engines are two Redis clients,
 * as two JVMs would be). Closes everything it made.
 */
final class EngineFixture implements AutoCloseable {

    final TestRedisServer redis;

    final List<LockHandle> lost = new CopyOnWriteArrayList<>();

    private final List<AutoCloseable> resources = new ArrayList<>();

    EngineFixture(TestRedisServer redis) {
        this.redis = redis;
    }

    static LockEngineSettings fastSettings() {
        return new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofMillis(500), Duration.ofMillis(200));
    }

    LettuceConnectionFactory connectionFactory() {
        return connectionFactory(Duration.ofSeconds(5), null, null);
    }

    /**
     * @param commandTimeout the driver's own timeout ({@code spring.data.redis.timeout})
     * @param user an ACL user, or null for the default user
     */
    LettuceConnectionFactory connectionFactory(Duration commandTimeout, String user, String password) {
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(redis.host(), redis.port());
        if (user != null) {
            server.setUsername(user);
            server.setPassword(password);
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

    LettuceLockServer server(String keyPrefix) {
        return server(connectionFactory(), keyPrefix);
    }

    /** Closes the server with the rest. */
    <S extends LockServer> S track(S server) {
        resources.add(0, server);
        return server;
    }

    LettuceLockServer server(LettuceConnectionFactory factory, String keyPrefix) {
        LettuceLockServer server = new LettuceLockServer(factory, keyPrefix);
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
