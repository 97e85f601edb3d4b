package dev.leasehold.engine.quorum;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.server.QuorumNodeServer;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One independent Redis server of a quorum: its {@link QuorumNodeServer} (on Lettuce, one connection and one
 * pub/sub connection: {@link #onLettuce}), whether it counts toward a majority, and its health.
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

    private final QuorumNodeServer server;

    /** What the node closes after its server (a connection factory of its own), or null. */
    private final @Nullable AutoCloseable resources;

    private final LongAdder granted = new LongAdder();

    private final LongAdder refused = new LongAdder();

    private final LongAdder errors = new LongAdder();

    private final AtomicBoolean probing = new AtomicBoolean();

    private final Object stateLock = new Object();

    private volatile LongSupplier restartDelayMillis = () -> 0;

    private volatile Duration probeTimeout = Duration.ofSeconds(2);

    private volatile @Nullable CoarseTimeouts timeouts;

    private volatile @Nullable String runId;

    /** False until a probe confirmed the server after start-up or a disconnect. */
    private volatile boolean verified;

    private volatile boolean waiting;

    private volatile long waitingUntilNanos;

    private volatile boolean answering;

    /**
     * @param name {@code host:port}, for logs and metrics
     * @param server the node's server; the caller tells {@link #disconnected()} and {@link #probe()} when its
     * connection drops and comes back
     * @param resources closed after the server (null: nothing)
     */
    public QuorumNode(String name, QuorumNodeServer server, @Nullable AutoCloseable resources) {
        this.name = name;
        this.server = server;
        this.resources = resources;
    }

    /**
     * A node on Lettuce: a {@link LettuceLockServer} on {@code factory}, which it watches for disconnects.
     * @param factory a started factory for this server only
     * @param ownsFactory whether {@link #close()} destroys the factory
     */
    public static QuorumNode onLettuce(String name, LettuceConnectionFactory factory, String keyPrefix,
            boolean ownsFactory) {
        QuorumNode node = new QuorumNode(name, LettuceLockServer.quorumNode(factory, keyPrefix),
                ownsFactory ? factory::destroy : null);
        factory.getRequiredNativeClient().addListener(new RedisConnectionStateListener() {

            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
                node.disconnected();
            }

            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
                node.probe();
            }
        });
        return node;
    }

    /** The connection dropped: the server may come back as a new, empty one, so it does not count before a probe says which. */
    public void disconnected() {
        verified = false;
    }

    void configure(LongSupplier restartDelayMillis, Duration probeTimeout, CoarseTimeouts timeouts) {
        this.restartDelayMillis = restartDelayMillis;
        this.probeTimeout = probeTimeout;
        this.timeouts = timeouts;
    }

    public String name() {
        return name;
    }

    QuorumNodeServer server() {
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
    public CompletableFuture<Void> probe() {
        if (!probing.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<String> asked = server.runId();
        CoarseTimeouts limits = timeouts;
        // the quorum's own tick bounds it (on the engine's clock); a node not yet in a quorum, the JDK's timer
        CompletableFuture<String> bounded = limits != null ? limits.orTimeout(asked, probeTimeout.toNanos())
                : asked.orTimeout(probeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        return bounded
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
        if (resources != null) {
            try {
                resources.close();
            }
            catch (Exception ex) {
                logger.debug("Closing what " + this + " used failed", ex);
            }
        }
    }

    @Override
    public String toString() {
        return "Redis node " + name;
    }
}
