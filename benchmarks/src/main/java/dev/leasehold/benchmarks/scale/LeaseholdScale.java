package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.redis.LettuceLockServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Leasehold's engine with the starter's defaults but the Scale run's watchdog lease. */
final class LeaseholdScale implements ScaleContender {

    static final String ID = "leasehold";

    private final LettuceConnectionFactory connectionFactory;

    private final LettuceLockServer server;

    private final DefaultLockEngine engine;

    private final AtomicLong lost = new AtomicLong();

    LeaseholdScale(Redis redis, Duration lease) {
        LockEngineSettings settings = LockEngineSettings.defaults().withLeaseTime(lease);
        this.connectionFactory = redis.newConnectionFactory();
        this.server = new LettuceLockServer(connectionFactory, settings.keyPrefix());
        this.engine = new DefaultLockEngine(server, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                lost.incrementAndGet();
            }
        });
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Object hold(String key) {
        return engine.tryLock(key, LockMode.EXCLUSIVE, Duration.ofSeconds(30), null)
            .orElseThrow(() -> new IllegalStateException("a free lock was not granted within 30 s: " + key));
    }

    @Override
    public Object tryHold(String key, Duration wait) {
        return engine.tryLock(key, LockMode.EXCLUSIVE, wait, null).orElse(null);
    }

    @Override
    public void release(Object handle) {
        ((LockHandle) handle).close();
    }

    @Override
    public CompletableFuture<Object> tryHoldAsync(String key, Duration wait, long waiterId) {
        return engine.tryLockAsync(key, LockMode.EXCLUSIVE, wait, null).toCompletableFuture()
            .thenApply((Optional<LockHandle> handle) -> handle.orElse(null));
    }

    @Override
    public CompletableFuture<Void> releaseAsync(Object handle, long waiterId) {
        return engine.closeAsync((LockHandle) handle);
    }

    @Override
    public String redisKey(String key) {
        return "lock:{" + key + "}";
    }

    @Override
    public long reportedLost() {
        return lost.get();
    }

    @Override
    public void close() {
        engine.close();
        server.close();
        connectionFactory.destroy();
    }
}
