package dev.leasehold.engine.quorum;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.support.EngineClock;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One independent Redis server of a quorum: its {@link LettuceLockServer} (one connection and one
 * pub/sub connection), whether it counts toward a majority, and its health.
 * <p>
 * Redlock's "delayed restart" rule, done automatically: a server that restarted lost its lock keys, so
 * it could grant a lock that a majority elsewhere still holds. It does not count until the longest lease
 * a client may still hold has passed since it came back. A restart is recognised by the server's
 * {@code run_id}: after any disconnect the node does not count until a probe (INFO server) has shown the
 * same {@code run_id} as before, or a new one (then it waits); a probe also runs every second.
 */
public final class QuorumNode implements AutoCloseable {

    private static final Log logger = LogFactory.getLog(QuorumNode.class);

    private final String name;

    private final LettuceLockServer server;

    private final LettuceConnectionFactory factory;

    private final boolean ownsFactory;

    private final LongAdder granted = new LongAdder();

    private final LongAdder refused = new LongAdder();

    private final LongAdder errors = new LongAdder();

    private final AtomicBoolean probing = new AtomicBoolean();

    private final Object stateLock = new Object();

    private volatile LongSupplier restartDelayMillis = () -> 0;

    private volatile Duration probeTimeout = Duration.ofSeconds(2);

    private volatile @Nullable String runId;

    /** False until a probe confirmed the server after start-up or a disconnect. */
    private volatile boolean verified;

    private volatile boolean waiting;

    private volatile long waitingUntilNanos;

    private volatile boolean answering;

    /**
     * @param name {@code host:port}, for logs and metrics
     * @param factory a started factory for this server only
     * @param ownsFactory whether {@link #close()} destroys the factory
     */
    public QuorumNode(String name, LettuceConnectionFactory factory, String keyPrefix, boolean ownsFactory) {
        this.name = name;
        this.factory = factory;
        this.ownsFactory = ownsFactory;
        this.server = LettuceLockServer.quorumNode(factory, keyPrefix);
        factory.getRequiredNativeClient().addListener(new RedisConnectionStateListener() {

            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
                // it may come back as a new, empty server: do not count it before a probe says which
                verified = false;
            }

            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
                probe();
            }
        });
    }

    void configure(LongSupplier restartDelayMillis, Duration probeTimeout) {
        this.restartDelayMillis = restartDelayMillis;
        this.probeTimeout = probeTimeout;
    }

    public String name() {
        return name;
    }

    LettuceLockServer server() {
        return server;
    }

    /** Whether this node's answers count toward a majority now. */
    boolean counts() {
        if (!verified) {
            return false;
        }
        if (waiting) {
            if (EngineClock.nanoTime() - waitingUntilNanos < 0) {
                return false;
            }
            synchronized (stateLock) {
                if (waiting) {
                    waiting = false;
                    logger.info("Redis node " + name + " counts toward the quorum again (its restart delay has passed)");
                }
            }
        }
        return true;
    }

    /** Asks the server for its run_id, unless a probe is already under way; completes when it answered or failed. */
    CompletableFuture<Void> probe() {
        if (!probing.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        return server.runId()
            .orTimeout(probeTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .handle((id, error) -> {
                probing.set(false);
                if (error != null) {
                    answered(false);
                    return null;
                }
                answered(true);
                synchronized (stateLock) {
                    String before = runId;
                    if (before != null && !before.equals(id)) {
                        long delay = restartDelayMillis.getAsLong();
                        waitingUntilNanos = EngineClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay);
                        waiting = true;
                        logger.warn("Redis node " + name + " restarted (run_id " + before + " -> " + id
                                + ") and lost its lock keys: it does not count toward the quorum for the next "
                                + delay + " ms (the longest lease a holder may still rely on)");
                    }
                    runId = id;
                    verified = true;
                }
                return null;
            });
    }

    void failed() {
        errors.increment();
    }

    void answered(boolean inTime) {
        if (answering != inTime) {
            answering = inTime;
            if (!inTime) {
                logger.warn("Redis node " + name + " of the quorum does not answer");
            }
            else if (runId != null) {
                logger.info("Redis node " + name + " of the quorum answers again");
            }
        }
    }

    void granted() {
        granted.increment();
    }

    void refused() {
        refused.increment();
    }

    public QuorumNodeHealth health() {
        boolean counted = counts();
        long left = waiting ? Math.max(0, TimeUnit.NANOSECONDS.toMillis(waitingUntilNanos - EngineClock.nanoTime())) : 0;
        return new QuorumNodeHealth(name, answering, counted, waiting && left > 0, left, granted.sum(),
                refused.sum(), errors.sum());
    }

    @Override
    public void close() {
        server.close();
        if (ownsFactory) {
            factory.destroy();
        }
    }

    @Override
    public String toString() {
        return "Redis node " + name;
    }
}
