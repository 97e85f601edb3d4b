package dev.leasehold.benchmarks.contenders;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.RedisTemplateLockServer;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Leasehold's {@code LockService} (the engine the starter builds), with the default watchdog lease: on
 * Lettuce (Spring Boot's default client, {@link LettuceLockServer}), or on a pooled Jedis factory with
 * {@link RedisTemplateLockServer}, what auto-configuration picks for {@code spring.data.redis.client-type=jedis}.
 */
public final class LeaseholdContender implements Contender {

    public static final String ID = "leasehold";

    public static final String JEDIS_ID = "leasehold-jedis";

    private final boolean jedis;

    private final RedisConnectionFactory connectionFactory;

    private final LockServer server;

    private final DefaultLockEngine engine;

    public LeaseholdContender(Redis redis) {
        this(redis, false);
    }

    public LeaseholdContender(Redis redis, boolean jedis) {
        // the starter's defaults (leasehold.* properties)
        LockEngineSettings settings = withLinger(new LockEngineSettings("lock:", Duration.ofSeconds(30),
                Duration.ofSeconds(2), Duration.ofSeconds(2)));
        this.jedis = jedis;
        if (jedis) {
            this.connectionFactory = redis.newJedisConnectionFactory();
            this.server = new RedisTemplateLockServer(connectionFactory, settings.keyPrefix());
        }
        else {
            var lettuce = redis.newConnectionFactory();
            this.connectionFactory = lettuce;
            this.server = new LettuceLockServer(lettuce, settings.keyPrefix());
        }
        this.engine = new DefaultLockEngine(server, settings, new LockObserver() {
        });
    }

    /** The hand-off linger from {@code -Dbench.lingerMicros=N} (a sweep of leasehold.hand-off.linger), else the default. */
    private static LockEngineSettings withLinger(LockEngineSettings settings) {
        String micros = System.getProperty("bench.lingerMicros");
        if (micros == null) {
            return settings;
        }
        LockEngineSettings.HandOff handOff = settings.handOff();
        return settings.withHandOff(new LockEngineSettings.HandOff(handOff.maxTurn(), handOff.turnCheck(),
                Duration.ofNanos(Long.parseLong(micros) * 1000)));
    }

    @Override
    public String id() {
        return jedis ? JEDIS_ID : ID;
    }

    @Override
    public String displayName() {
        return jedis ? "Leasehold LockService on Jedis" : "Leasehold LockService";
    }

    @Override
    public boolean supportsReadWrite() {
        return true;
    }

    @Override
    public boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection) {
        Optional<LockHandle> handle = engine.tryLock(key, mode, wait, null);
        if (handle.isEmpty()) {
            return false;
        }
        try (LockHandle held = handle.get()) {
            criticalSection.run();
        }
        return true;
    }

    @Override
    public void close() {
        engine.close();
        server.close();
        try {
            ((DisposableBean) connectionFactory).destroy();
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
