package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.QuorumNodeServer;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The per-server steps on one Redis deployment (standalone, Sentinel or Cluster) reached through Spring
 * Data Redis's {@link LettuceConnectionFactory}: the user's {@code spring.data.redis.*} settings.
 * <p>
 * Scripts go as EVALSHA on Lettuce's asynchronous API over the factory's connection, falling back to
 * EVAL on NOSCRIPT; on Cluster, Lettuce routes each script by its keys, which share one hash tag. A
 * step's future completes only after the last command it sent (the EVAL of a fallback included), so a
 * take-back chained after it is sent after anything the step may still run. Acknowledged writes go on a
 * connection of their own ({@link AcknowledgedWrites}); release messages arrive on {@link ReleaseSubscriptions}.
 */
public class LettuceLockServer extends ScriptedLockServer implements QuorumNodeServer {

    private static final Log logger = LogFactory.getLog(LettuceLockServer.class);

    private final LettuceConnectionFactory connectionFactory;

    private final ReleaseSubscriptions subscriptions;

    private final ReentrantLock connectionLock = new ReentrantLock();

    private volatile @Nullable LettuceConnection dataConnection;

    private volatile boolean closed;

    /** Null unless grants and renewals must be acknowledged by replicas. */
    private final @Nullable AcknowledgedWrites acknowledgedWrites;

    /**
     * @param keyPrefix used to name the channel that keeps the shared subscription open between waits
     */
    public LettuceLockServer(LettuceConnectionFactory connectionFactory, String keyPrefix) {
        this(connectionFactory, keyPrefix, 0, Duration.ofMillis(100));
    }

    /**
     * @param ackReplicas how many replicas must acknowledge (Redis {@code WAIT}) a grant or renewal before it
     * counts ({@code leasehold.replica-ack.replicas}); 0 for none
     * @param ackTimeout how long to wait for them ({@code leasehold.replica-ack.timeout})
     */
    public LettuceLockServer(LettuceConnectionFactory connectionFactory, String keyPrefix, int ackReplicas,
            Duration ackTimeout) {
        this(connectionFactory, keyPrefix, ackReplicas, ackTimeout, false);
    }

    /**
     * One node of a quorum (QuorumLockServer): fencing tokens count up from 1 on a counter that never
     * expires, so the quorum can make a token known to a majority; no replica acknowledgement.
     */
    public static LettuceLockServer quorumNode(LettuceConnectionFactory connectionFactory, String keyPrefix) {
        return new LettuceLockServer(connectionFactory, keyPrefix, 0, Duration.ofMillis(100), true);
    }

    private LettuceLockServer(LettuceConnectionFactory connectionFactory, String keyPrefix, int ackReplicas,
            Duration ackTimeout, boolean countingFence) {
        super(ackReplicas, ackTimeout, countingFence);
        this.connectionFactory = connectionFactory;
        this.subscriptions = new ReleaseSubscriptions(connectionFactory, keyPrefix);
        this.acknowledgedWrites = ackReplicas > 0 ? new AcknowledgedWrites(connectionFactory) : null;
    }

    @Override
    protected <T> CompletableFuture<T> eval(LockScript script, Reply reply, List<String> keys, List<String> args) {
        RedisClusterAsyncCommands<byte[], byte[]> commands;
        try {
            commands = commands();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(LettuceScripts.translate(ex));
        }
        return LettuceScripts.eval(commands, script, reply, keys, args);
    }

    @Override
    protected <T> CompletableFuture<Acknowledged<T>> evalAcknowledged(LockScript script, Reply reply,
            List<String> keys, List<String> args, int replicas, Duration timeout) {
        // called only when leasehold.replica-ack asks for replicas, which made acknowledgedWrites
        return Objects.requireNonNull(acknowledgedWrites, "replica acknowledgement is on")
            .evalAcknowledged(script, reply, keys, args, replicas, timeout);
    }

    /** With acknowledgements, on their connection: after this key's acquires, before the next one's. */
    @Override
    protected <T> CompletableFuture<T> evalInOrder(LockScript script, Reply reply, List<String> keys, List<String> args) {
        return acknowledgedWrites != null ? acknowledgedWrites.eval(script, reply, keys, args)
                : eval(script, reply, keys, args);
    }

    /**
     * Tells the scripts to wake waiters with SPUBLISH on a Cluster (they do so from Redis 7 on, where
     * {@link ReleaseSubscriptions} subscribes with SSUBSCRIBE), so a release is not broadcast to every node.
     */
    @Override
    protected String publishMode() {
        return subscriptions.clustered() ? "sharded" : "";
    }

    @Override
    protected boolean clustered() {
        return subscriptions.clustered();
    }

    /** A thousand per master on a Cluster (the masters Lettuce knows), so that each master's script call carries as many. */
    @Override
    public int renewalsPerCall() {
        Partitions partitions = clustered() ? partitions() : null; // a throw here: the watchdog keeps its last size
        if (partitions == null) {
            return super.renewalsPerCall();
        }
        long masters = partitions.stream().filter(node -> !node.getSlots().isEmpty()).count();
        return (int) Math.max(1, masters) * super.renewalsPerCall();
    }

    /** From Lettuce's view of the Cluster (kept up to date by its topology refresh; a lookup per slot, no I/O). */
    @Override
    protected @Nullable IntUnaryOperator masters() {
        Partitions partitions = partitions();
        if (partitions == null) {
            return null;
        }
        Map<RedisClusterNode, Integer> numbers = new IdentityHashMap<>();
        return slot -> {
            RedisClusterNode master = partitions.getPartitionBySlot(slot);
            // a slot no master is known to serve: a batch of its own (the script finds where it lives)
            return master == null ? -1 - slot : numbers.computeIfAbsent(master, each -> numbers.size());
        };
    }

    /** Lettuce's view of the Cluster; null off a Cluster or while not connected. */
    private @Nullable Partitions partitions() {
        RedisClusterAsyncCommands<byte[], byte[]> commands;
        try {
            commands = commands();
        }
        catch (RuntimeException ex) {
            return null;
        }
        return commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster
                ? cluster.getStatefulConnection().getPartitions() : null;
    }

    @Override
    public void onRelease(Consumer<String> channelListener) {
        subscriptions.onRelease(channelListener);
    }

    @Override
    public void onSubscriptionLost(Runnable listener) {
        subscriptions.onLost(listener);
    }

    @Override
    public void prepareSubscriptions() {
        subscriptions.prepare();
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return subscriptions.subscribe(channel);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return subscriptions.unsubscribe(channel);
    }

    private RedisClusterAsyncCommands<byte[], byte[]> commands() {
        if (closed) {
            // never reconnect after close: a late reply's follow-up step may run on a Lettuce I/O thread, and a
            // blocking connect there can hang the shutdown of the other connections
            throw new LockServerException(LockServerException.Kind.UNAVAILABLE, "the lock server is closed", null);
        }
        LettuceConnection connection = dataConnection;
        if (connection == null || connection.isClosed()) {
            if (Thread.currentThread() instanceof io.netty.util.concurrent.FastThreadLocalThread) {
                // a step that follows a reply runs on the driver's I/O thread: connecting there blocks that thread
                // on a connection it must make itself (found by the campaign: the event loop hung for good, with
                // the factory's lock). The step fails like a refused connection; the next step from an
                // application or starter thread connects.
                throw new LockServerException(LockServerException.Kind.UNAVAILABLE,
                        "no connection to Redis yet, and not connecting on the driver's I/O thread", null);
            }
            // a lock, not synchronized: connecting is I/O and must not pin a virtual thread; interruptible, so
            // that closing the engine can stop a step waiting here
            try {
                connectionLock.lockInterruptibly();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new LockServerException(LockServerException.Kind.UNAVAILABLE, "interrupted while connecting", ex);
            }
            try {
                connection = dataConnection;
                if (connection == null || connection.isClosed()) {
                    connection = (LettuceConnection) connectionFactory.getConnection();
                    dataConnection = connection;
                }
            }
            finally {
                connectionLock.unlock();
            }
        }
        return connection.getNativeConnection();
    }

    @Override
    public LettuceLockServer fairQueue(FairQueue queue) {
        super.fairQueue(queue);
        return this;
    }

    @Override
    public LettuceLockServer fenceRetention(@Nullable Duration retention) {
        super.fenceRetention(retention);
        return this;
    }

    /** The server's {@code run_id} (from INFO server): it changes when the server restarts. */
    @Override
    public CompletableFuture<String> runId() {
        try {
            return commands().info("server").toCompletableFuture().thenApply(LettuceLockServer::runIdOf);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private static String runIdOf(String info) {
        for (String line : info.split("\\r?\\n")) {
            if (line.startsWith("run_id:")) {
                return line.substring("run_id:".length()).trim();
            }
        }
        throw new IllegalStateException("INFO server gave no run_id");
    }

    @Override
    public CompletableFuture<Void> ping() {
        try {
            return commands().ping().toCompletableFuture().thenApply(pong -> null);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /** Idempotent: the engine's lifecycle closes it before the connection factory stops, then its destroy method. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        subscriptions.close();
        if (acknowledgedWrites != null) {
            acknowledgedWrites.close();
        }
        LettuceConnection connection = dataConnection;
        dataConnection = null;
        if (connection != null) {
            try {
                connection.close();
            }
            catch (RuntimeException ex) {
                logger.debug("Closing the Redis connection failed", ex);
            }
        }
    }
}
