package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import dev.leasehold.LockMode;
import dev.leasehold.engine.FairQueue;
import dev.leasehold.engine.Grant;
import dev.leasehold.engine.KeyState;
import dev.leasehold.engine.LockKeys;
import dev.leasehold.engine.LockServer;
import dev.leasehold.engine.LockServerException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The per-server steps on one Redis deployment (standalone, Sentinel or Cluster) reached through Spring
 * Data Redis's {@link LettuceConnectionFactory}: the user's {@code spring.data.redis.*} settings.
 * <p>
 * Scripts go as EVALSHA on Lettuce's asynchronous API over the factory's connection, falling back to
 * EVAL on NOSCRIPT; on Cluster, Lettuce routes each script by its keys, which share one hash tag. A
 * step's future completes only after the last command it sent (the EVAL of a fallback included), so a
 * take-back chained after it is sent after anything the step may still run. Release messages arrive on
 * {@link ReleaseSubscriptions}.
 */
public class LettuceLockServer implements LockServer {

    private static final Log logger = LogFactory.getLog(LettuceLockServer.class);

    private final LettuceConnectionFactory connectionFactory;

    private final ReleaseSubscriptions subscriptions;

    private final ReentrantLock connectionLock = new ReentrantLock();

    private final AtomicBoolean publishRefusalLogged = new AtomicBoolean();

    private volatile LettuceConnection dataConnection;

    private volatile boolean closed;

    /** Null unless grants and renewals must be acknowledged by replicas. */
    private final AcknowledgedWrites acknowledged;

    /** Quorum mode: fencing tokens from a plain counter that never expires, not from the server clock. */
    private final boolean countingFence;

    private static final byte[] COUNTING_FENCE = "count".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] CLOCK_FENCE = "clock".getBytes(StandardCharsets.US_ASCII);

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
        this.countingFence = countingFence;
        this.connectionFactory = connectionFactory;
        this.subscriptions = new ReleaseSubscriptions(connectionFactory, keyPrefix);
        this.acknowledged = ackReplicas > 0 ? new AcknowledgedWrites(connectionFactory, ackReplicas, ackTimeout) : null;
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, boolean joinQueue) {
        LockScript script = mode == LockMode.READ ? LockScript.ACQUIRE_SHARED : LockScript.ACQUIRE_EXCLUSIVE;
        byte[][] scriptKeys = keys(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(),
                keys.queueExpiry());
        byte[][] args = { bytes(token), bytes(leaseMillis), bytes(writerWaitingMillis), bytes(waiterId),
                countingFence ? COUNTING_FENCE : CLOCK_FENCE, joinQueue && queuesWaiters() ? JOIN_QUEUE : NO_QUEUE,
                bytes(FairQueue.ENTRY_MILLIS), bytes(reservesFences() ? FairQueue.FENCE_BLOCK : 1) };
        if (acknowledged == null) {
            CompletableFuture<List<Object>> reply = eval(script, ScriptOutputType.MULTI, scriptKeys, args);
            return reply.thenApply(ScriptReplies::toGrant);
        }
        CompletableFuture<AcknowledgedWrites.Reply<List<Object>>> reply = acknowledged
            .evalAcknowledged(script, ScriptOutputType.MULTI, scriptKeys, args);
        return reply.exceptionallyCompose(ex -> CompletableFuture.failedFuture(translate(ex))).thenCompose(acked -> {
            Grant grant = ScriptReplies.toGrant(acked.value());
            if (!grant.granted() || acked.acknowledgements() >= acknowledged.replicas()) {
                return CompletableFuture.completedFuture(grant);
            }
            // not on enough replicas: a failover could lose it, so it does not count; take it back first
            return release(keys, mode, token).handle((released, error) -> {
                throw notAcknowledged("grant", acked.acknowledgements());
            });
        });
    }

    /**
     * Tells the scripts to wake waiters with SPUBLISH on a Cluster (they do so from Redis 7 on, where
     * {@link ReleaseSubscriptions} subscribes with SSUBSCRIBE), so a release is not broadcast to every node.
     */
    private byte[] publishMode() {
        return subscriptions.clustered() ? SHARDED : NOT_SHARDED;
    }

    private static final byte[] SHARDED = bytes("sharded");

    private static final byte[] JOIN_QUEUE = bytes("1");

    private static final byte[] NO_QUEUE = new byte[0];

    private static final byte[] QUEUED = bytes("queued");

    /** Quorum nodes (counting fence) keep the broadcast wake-up: the queue is per server, not per quorum. */
    @Override
    public boolean queuesWaiters() {
        return !countingFence;
    }

    @Override
    public boolean reservesFences() {
        return !countingFence;
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        // a quorum node (counting fence) reserves too: QuorumLockServer takes the block from a majority
        byte[][] scriptKeys = keys(keys.lock(), keys.fence(), keys.queue(), keys.queueExpiry());
        byte[][] args = { bytes(token), bytes(leaseMillis), bytes(FairQueue.FENCE_BLOCK),
                countingFence ? COUNTING_FENCE : CLOCK_FENCE };
        CompletableFuture<List<Object>> reply = acknowledged == null
                ? eval(LockScript.RESERVE_FENCES, ScriptOutputType.MULTI, scriptKeys, args)
                : acknowledged.<List<Object>>eval(LockScript.RESERVE_FENCES, ScriptOutputType.MULTI, scriptKeys, args)
                    .exceptionallyCompose(ex -> CompletableFuture.failedFuture(translate(ex)));
        return reply.thenApply(ScriptReplies::toFenceBlock);
    }

    private byte[] queueMode() {
        return queuesWaiters() ? QUEUED : NO_QUEUE;
    }

    private static final byte[] NOT_SHARDED = new byte[0];

    private LockServerException notAcknowledged(String what, long acknowledgements) {
        return new LockServerException(LockServerException.Kind.REFUSED, "the " + what + " was acknowledged by "
                + acknowledgements + " of the " + acknowledged.replicas() + " replicas that leasehold.replica-ack.replicas"
                + " asks for within leasehold.replica-ack.timeout (" + acknowledged.timeout() + ")", null);
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        boolean shared = mode == LockMode.READ;
        LockScript script = shared ? LockScript.RENEW_SHARED : LockScript.RENEW_EXCLUSIVE;
        byte[][] scriptKeys = keys(shared ? keys.readers() : keys.lock());
        if (acknowledged == null) {
            CompletableFuture<Long> reply = eval(script, ScriptOutputType.INTEGER, scriptKeys, bytes(token),
                    bytes(leaseMillis));
            return reply.thenApply(result -> result == 1L);
        }
        CompletableFuture<AcknowledgedWrites.Reply<Long>> reply = acknowledged.evalAcknowledged(script,
                ScriptOutputType.INTEGER, scriptKeys, bytes(token), bytes(leaseMillis));
        return reply.exceptionallyCompose(ex -> CompletableFuture.failedFuture(translate(ex))).thenApply(acked -> {
            if (acked.value() == 1L && acked.acknowledgements() < acknowledged.replicas()) {
                // an unconfirmed renewal: the watchdog retries, and loses the lock if the lease ends first
                throw notAcknowledged("renewal", acked.acknowledgements());
            }
            return acked.value() == 1L;
        });
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return release(keys, mode, token, 0);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        boolean shared = mode == LockMode.READ;
        LockScript script = shared ? LockScript.RELEASE_SHARED : LockScript.RELEASE_EXCLUSIVE;
        byte[][] scriptKeys = shared ? keys(keys.readers(), keys.lock(), keys.queue(), keys.queueExpiry())
                : keys(keys.lock(), keys.queue(), keys.queueExpiry());
        byte[][] args = { bytes(token), bytes(keys.channel()), publishMode(), bytes(Math.max(0, keepMillis)),
                queueMode(), bytes(FairQueue.CLAIM_MILLIS) };
        // with acknowledgements, on their connection: after this key's acquires, before the next one's
        CompletableFuture<Long> reply = acknowledged == null
                ? eval(script, ScriptOutputType.INTEGER, scriptKeys, args)
                : acknowledged.<Long>eval(script, ScriptOutputType.INTEGER, scriptKeys, args)
                    .exceptionallyCompose(ex -> CompletableFuture.failedFuture(translate(ex)));
        return reply.thenApply(result -> {
            if (result == 2L && publishRefusalLogged.compareAndSet(false, true)) {
                logger.warn("Redis refused to PUBLISH on " + keys.channel() + " (the Redis user has no rights on that "
                        + "channel). Locks are released, but waiters in other JVMs wake only at their safety re-check. "
                        + "Grant the channels, e.g. ACL SETUSER <user> &" + ScriptReplies.channelPattern(keys) + " (logged once)");
            }
            return result >= 1L;
        });
    }

    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        CompletableFuture<Long> reply = eval(LockScript.WITHDRAW, ScriptOutputType.INTEGER,
                keys(keys.writerWaiting(), keys.lock(), keys.readers(), keys.queue(), keys.queueExpiry()),
                bytes(waiterId), bytes(keys.channel()), publishMode(), queueMode(), bytes(FairQueue.CLAIM_MILLIS));
        return reply.thenApply(result -> result == 1L);
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        CompletableFuture<Long> reply = eval(LockScript.IS_LOCKED, ScriptOutputType.INTEGER,
                keys(keys.lock(), keys.readers()));
        return reply.thenApply(result -> result == 1L);
    }

    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        CompletableFuture<List<Object>> reply = eval(LockScript.INSPECT, ScriptOutputType.MULTI,
                keys(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(),
                keys.queueExpiry()));
        return reply.thenApply(result -> ScriptReplies.toKeyState(keys.logicalKey(), result));
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
    public CompletableFuture<Void> subscribe(String channel) {
        return subscriptions.subscribe(channel);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return subscriptions.unsubscribe(channel);
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> eval(LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
        RedisClusterAsyncCommands<byte[], byte[]> commands;
        CompletableFuture<T> reply;
        try {
            commands = commands();
            // dispatching may throw too (a connection whose client resources were shut down under it)
            reply = (CompletableFuture<T>) commands.evalsha(script.sha1(), type, keys, args).toCompletableFuture();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(translate(ex));
        }
        return reply.exceptionallyCompose(ex -> {
            if (isNoScript(ex)) {
                // the script cache is empty (first use, restart, failover, SCRIPT FLUSH): EVAL loads it again
                return (CompletableFuture<T>) commands.eval(script.body(), type, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(ex);
        }).exceptionallyCompose(ex -> CompletableFuture.failedFuture(translate(ex)));
    }

    private RedisClusterAsyncCommands<byte[], byte[]> commands() {
        if (closed) {
            // never reconnect after close: a late reply's follow-up step may run on a Lettuce I/O thread, and a
            // blocking connect there can hang the shutdown of the other connections
            throw new LockServerException(LockServerException.Kind.UNAVAILABLE, "the lock server is closed", null);
        }
        LettuceConnection connection = dataConnection;
        if (connection == null || connection.isClosed()) {
            // a lock, not synchronized: connecting is I/O and must not pin a virtual thread
            connectionLock.lock();
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

    /** Says what happened in the engine's terms: whether the command may still run decides a take-back. */
    static LockServerException translate(Throwable ex) {
        Throwable cause = ex;
        while ((cause instanceof java.util.concurrent.CompletionException
                || cause instanceof java.util.concurrent.ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof LockServerException own) {
            return own;
        }
        if (cause instanceof RedisCommandExecutionException) {
            return new LockServerException(LockServerException.Kind.REFUSED, String.valueOf(cause.getMessage()), cause);
        }
        if (cause instanceof RedisConnectionException) {
            return new LockServerException(LockServerException.Kind.UNAVAILABLE, String.valueOf(cause.getMessage()), cause);
        }
        if (cause instanceof IllegalStateException) {
            // Spring Data Redis: the connection factory was stopped or destroyed (the application is shutting down)
            return new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "the Redis connection factory is not running (" + cause.getMessage() + ")", cause);
        }
        return new LockServerException(LockServerException.Kind.NO_REPLY, String.valueOf(cause), cause);
    }

    static boolean isNoScript(Throwable ex) {
        Throwable cause = ex;
        while (cause != null) {
            if (cause instanceof RedisNoScriptException
                    || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"))) {
                return true;
            }
            cause = cause.getCause();
        }
        return false;
    }

    private static byte[][] keys(String... keys) {
        byte[][] result = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            result[i] = bytes(keys[i]);
        }
        return result;
    }

    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    // ---- quorum mode: steps a QuorumLockServer runs on each node ----

    /** Raises the key's fencing counter to at least {@code atLeast}; answers the counter after the call. */
    public CompletableFuture<Long> raiseFence(LockKeys keys, long atLeast) {
        return eval(LockScript.RAISE_FENCE, ScriptOutputType.INTEGER, keys(keys.fence()), bytes(atLeast));
    }

    /** The server's {@code run_id} (from INFO server): it changes when the server restarts. */
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
    public void close() {
        closed = true;
        subscriptions.close();
        if (acknowledged != null) {
            acknowledged.close();
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

    @Override
    public CompletableFuture<Void> ping() {
        try {
            return commands().ping().toCompletableFuture().thenApply(pong -> null);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }
}
