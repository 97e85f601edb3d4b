package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.redis.LettuceLockServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** One Leasehold client on the Cluster part's cluster (its own connections), counting the locks it reports lost. */
final class ClusterEngine implements AutoCloseable {

    private final LettuceConnectionFactory connectionFactory;

    private final LettuceLockServer server;

    private final DefaultLockEngine engine;

    private final AtomicLong lost = new AtomicLong();

    ClusterEngine(ClusterNodes nodes, Duration lease) {
        LockEngineSettings settings = LockEngineSettings.defaults().withLeaseTime(lease);
        this.connectionFactory = nodes.newConnectionFactory();
        this.server = new LettuceLockServer(connectionFactory, settings.keyPrefix());
        this.engine = new DefaultLockEngine(server, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                lost.incrementAndGet();
            }
        });
    }

    /** The lock on {@code key} within 30 s, or an exception (which the part counts as an error reaching a caller). */
    LockHandle hold(String key) {
        return engine.tryLock(key, LockMode.EXCLUSIVE, Duration.ofSeconds(30), null)
            .orElseThrow(() -> new IllegalStateException("not granted within 30 s: " + key));
    }

    long lost() {
        return lost.get();
    }

    @Override
    public void close() {
        engine.close();
        server.close();
        connectionFactory.destroy();
    }
}
