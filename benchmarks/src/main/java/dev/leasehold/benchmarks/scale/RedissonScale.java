package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.benchmarks.contenders.Redis;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} with its defaults but the Scale run's watchdog lease ({@code lockWatchdogTimeout}).
 * Its locks belong to a thread id: an asynchronous waiter passes one of its own.
 */
final class RedissonScale implements ScaleContender {

    static final String ID = "redisson";

    private final RedissonClient client;

    RedissonScale(Redis redis, Duration lease) {
        Config config = new Config();
        config.setLockWatchdogTimeout(lease.toMillis());
        config.useSingleServer().setAddress(redis.url());
        this.client = Redisson.create(config);
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Object hold(String key) {
        RLock lock = client.getLock(key);
        lock.lock();
        return lock;
    }

    @Override
    public Object tryHold(String key, Duration wait) throws InterruptedException {
        RLock lock = client.getLock(key);
        return lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS) ? lock : null;
    }

    @Override
    public void release(Object handle) {
        ((RLock) handle).unlock();
    }

    @Override
    public CompletableFuture<Object> tryHoldAsync(String key, Duration wait, long waiterId) {
        RLock lock = client.getLock(key);
        // lease -1: the watchdog renews it
        return lock.tryLockAsync(wait.toMillis(), -1, TimeUnit.MILLISECONDS, waiterId).toCompletableFuture()
            .thenApply(granted -> granted ? lock : null);
    }

    @Override
    public CompletableFuture<Void> releaseAsync(Object handle, long waiterId) {
        return ((RLock) handle).unlockAsync(waiterId).toCompletableFuture();
    }

    @Override
    public String redisKey(String key) {
        return key;
    }

    @Override
    public long reportedLost() {
        return -1;
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
