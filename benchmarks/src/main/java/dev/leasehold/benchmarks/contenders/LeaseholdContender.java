package dev.leasehold.benchmarks.contenders;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.redis.LettuceLockServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Leasehold's {@code LockService} (the engine the starter builds), with the default watchdog lease. */
public final class LeaseholdContender implements Contender {

    public static final String ID = "leasehold";

    private final LettuceConnectionFactory connectionFactory;

    private final LettuceLockServer server;

    private final DefaultLockEngine engine;

    public LeaseholdContender(Redis redis) {
        // the starter's defaults (leasehold.* properties)
        LockEngineSettings settings = new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofSeconds(2),
                Duration.ofSeconds(2));
        this.connectionFactory = redis.newConnectionFactory();
        this.server = new LettuceLockServer(connectionFactory, settings.keyPrefix());
        this.engine = new DefaultLockEngine(server, settings, new LockObserver() {
        });
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String displayName() {
        return "Leasehold LockService";
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
        connectionFactory.destroy();
    }
}
