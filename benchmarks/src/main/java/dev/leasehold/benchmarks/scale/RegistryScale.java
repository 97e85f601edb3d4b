package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import dev.leasehold.benchmarks.contenders.Redis;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's {@code RedisLockRegistry} (pub/sub mode, its default) with the Scale run's lease as
 * {@code expireAfter} and its renewal scheduler on, so held locks are renewed as a watchdog would. Its cache
 * of lock objects is raised to the number of locks held (the default, 100,000, would drop locks in use at
 * a million). Its locks are thread-bound and it has no asynchronous wait.
 */
final class RegistryScale implements ScaleContender {

    static final String ID = "rlr-pubsub";

    private static final String REGISTRY_KEY = "scale-rlr";

    private final LettuceConnectionFactory connectionFactory;

    private final ThreadPoolTaskScheduler renewals = new ThreadPoolTaskScheduler();

    private final RedisLockRegistry registry;

    RegistryScale(Redis redis, Duration lease) {
        this.connectionFactory = redis.newConnectionFactory();
        this.registry = new RedisLockRegistry(connectionFactory, REGISTRY_KEY, lease);
        this.registry.setCacheCapacity(2_000_000);
        renewals.setThreadNamePrefix("rlr-renewal-");
        renewals.initialize();
        this.registry.setRenewalTaskScheduler(renewals);
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Object hold(String key) {
        Lock lock = registry.obtain(key);
        lock.lock();
        return lock;
    }

    @Override
    public Object tryHold(String key, Duration wait) throws InterruptedException {
        Lock lock = registry.obtain(key);
        return lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS) ? lock : null;
    }

    @Override
    public void release(Object handle) {
        ((Lock) handle).unlock();
    }

    @Override
    public CompletableFuture<Object> tryHoldAsync(String key, Duration wait, long waiterId) {
        return null;
    }

    @Override
    public boolean waitsAsync() {
        return false;
    }

    @Override
    public CompletableFuture<Void> releaseAsync(Object handle, long waiterId) {
        throw new UnsupportedOperationException("RedisLockRegistry has no asynchronous wait");
    }

    @Override
    public String redisKey(String key) {
        return REGISTRY_KEY + ":" + key;
    }

    @Override
    public long reportedLost() {
        return -1;
    }

    @Override
    public void close() {
        registry.destroy();
        renewals.shutdown();
        connectionFactory.destroy();
    }
}
