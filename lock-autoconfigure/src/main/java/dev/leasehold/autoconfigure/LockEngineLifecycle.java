package dev.leasehold.autoconfigure;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.server.LockServer;
import org.jspecify.annotations.Nullable;

import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Shuts the lock engine down as part of the context's lifecycle, in the phase right after the Redis
 * connection factory's: Spring stops higher phases first, so waiters give up and held locks are released
 * while the connection still works (a destroy method alone runs after the factory has stopped, when
 * releases can only fail and held keys stay until their lease ends). Being a phase below the web server's
 * graceful shutdown, requests still running then keep their locks until they finish.
 * <p>
 * The lock server closes right after the engine, in the same phase: its connections (the release channel's,
 * possibly still connecting since the first call that may wait opened it ahead) end before the factory stops
 * the client under them. Its destroy method, run later, finds it closed.
 */
final class LockEngineLifecycle implements SmartLifecycle {

    private final DefaultLockEngine engine;

    private final @Nullable LockServer server;

    private final int phase;

    private volatile boolean running;

    LockEngineLifecycle(DefaultLockEngine engine, @Nullable LockServer server, RedisConnectionFactory connectionFactory) {
        this.engine = engine;
        this.server = server;
        int factoryPhase = connectionFactory instanceof Phased phased ? phased.getPhase() : 0;
        this.phase = factoryPhase == Integer.MAX_VALUE ? factoryPhase : factoryPhase + 1;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        engine.close();
        if (server != null) {
            server.close();
        }
    }

    @Override
    public boolean isRunning() {
        return running && !engine.isClosed();
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
