package dev.leasehold.benchmarks.contenders;

import java.time.Duration;

import dev.leasehold.LockMode;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson's {@code RLock} and {@code RReadWriteLock} with its defaults (watchdog lease, pub/sub wake-up). */
public final class RedissonContender implements Contender {

    public static final String ID = "redisson";

    private final RedissonClient client;

    public RedissonContender(Redis redis) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.url());
        this.client = Redisson.create(config);
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String displayName() {
        return "Redisson RLock";
    }

    @Override
    public boolean supportsReadWrite() {
        return true;
    }

    @Override
    public boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection)
            throws InterruptedException {
        return Contender.withLock(lockFor(key, mode), wait, criticalSection);
    }

    private RLock lockFor(String key, LockMode mode) {
        if (mode == LockMode.EXCLUSIVE) {
            return client.getLock(key);
        }
        RReadWriteLock readWrite = client.getReadWriteLock(key);
        return mode == LockMode.READ ? readWrite.readLock() : readWrite.writeLock();
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
