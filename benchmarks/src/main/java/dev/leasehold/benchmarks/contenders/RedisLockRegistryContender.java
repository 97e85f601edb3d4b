package dev.leasehold.benchmarks.contenders;

import java.time.Duration;

import dev.leasehold.LockMode;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/** Spring Integration's {@code RedisLockRegistry} in one of its two modes, otherwise with its defaults. */
public final class RedisLockRegistryContender implements Contender {

    public static final String PUB_SUB_ID = "rlr-pubsub";

    public static final String SPIN_ID = "rlr-spin";

    private static final Duration EXPIRE_AFTER = Duration.ofSeconds(30);

    private final RedisLockType type;

    private final LettuceConnectionFactory connectionFactory;

    private final RedisLockRegistry registry;

    public RedisLockRegistryContender(Redis redis, RedisLockType type) {
        this.type = type;
        this.connectionFactory = redis.newConnectionFactory();
        // one registry key per mode, the same in both JVMs, so both JVMs' registries share the locks
        this.registry = new RedisLockRegistry(connectionFactory, "bench-rlr-" + type.name().toLowerCase(), EXPIRE_AFTER);
        this.registry.setRedisLockType(type);
    }

    @Override
    public String id() {
        return type == RedisLockType.PUB_SUB_LOCK ? PUB_SUB_ID : SPIN_ID;
    }

    @Override
    public String displayName() {
        return "Spring Integration RedisLockRegistry " + type.name();
    }

    @Override
    public boolean supportsReadWrite() {
        return false;
    }

    @Override
    public boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection)
            throws InterruptedException {
        if (mode == LockMode.READ) {
            throw new UnsupportedOperationException("RedisLockRegistry has no shared lock");
        }
        return Contender.withLock(registry.obtain(key), wait, criticalSection);
    }

    @Override
    public void close() {
        registry.destroy();
        connectionFactory.destroy();
    }
}
