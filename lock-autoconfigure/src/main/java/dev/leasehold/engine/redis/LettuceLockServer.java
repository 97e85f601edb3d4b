package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import dev.leasehold.LockMode;
import dev.leasehold.engine.Grant;
import dev.leasehold.engine.LockKeys;
import dev.leasehold.engine.LockServer;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.Subscription;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The per-server steps on one Redis deployment (standalone, Sentinel or Cluster) reached through Spring
 * Data Redis's {@link LettuceConnectionFactory}: the user's {@code spring.data.redis.*} settings.
 * <p>
 * Scripts go as EVALSHA on Lettuce's asynchronous API over the factory's connection, falling back to
 * EVAL once per server on NOSCRIPT; on Cluster, Lettuce routes each script by its keys, which share one
 * hash tag. Release messages arrive on one dedicated subscription connection for the whole JVM; its
 * (un)subscribe commands run in order on one thread.
 */
public class LettuceLockServer implements LockServer {

    private static final Log logger = LogFactory.getLog(LettuceLockServer.class);

    private final LettuceConnectionFactory connectionFactory;

    private final byte[] keepAliveChannel;

    private final ExecutorService subscriptionThread;

    private final ReleaseListener messageListener = new ReleaseListener();

    private volatile Consumer<String> releaseListener = channel -> {
    };

    private final ReentrantLock connectionLock = new ReentrantLock();

    private volatile LettuceConnection dataConnection;

    private RedisConnection subscriptionConnection;

    /** Quorum mode: fencing tokens from a plain counter that never expires, not from the server clock. */
    private final boolean countingFence;

    /**
     * @param keyPrefix used to name the channel that keeps the shared subscription open between waits
     */
    public LettuceLockServer(LettuceConnectionFactory connectionFactory, String keyPrefix) {
        this(connectionFactory, keyPrefix, false);
    }

    /**
     * @param countingFence true for one node of a quorum: fencing tokens count up from 1 on a counter that
     * never expires, so the quorum can make a token known to a majority (see QuorumLockServer)
     */
    public LettuceLockServer(LettuceConnectionFactory connectionFactory, String keyPrefix, boolean countingFence) {
        this.countingFence = countingFence;
        this.connectionFactory = connectionFactory;
        this.keepAliveChannel = (keyPrefix + "leasehold:subscription").getBytes(StandardCharsets.UTF_8);
        this.subscriptionThread = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "leasehold-subscriptions");
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis) {
        LockScript script = mode == LockMode.READ ? LockScript.ACQUIRE_SHARED : LockScript.ACQUIRE_EXCLUSIVE;
        CompletableFuture<List<Object>> reply = eval(script, ScriptOutputType.MULTI,
                keys(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence()), bytes(token),
                bytes(leaseMillis), bytes(writerWaitingMillis), bytes(countingFence ? "count" : "clock"));
        return reply.thenApply(LettuceLockServer::toGrant);
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        boolean shared = mode == LockMode.READ;
        CompletableFuture<Long> reply = eval(shared ? LockScript.RENEW_SHARED : LockScript.RENEW_EXCLUSIVE,
                ScriptOutputType.INTEGER, keys(shared ? keys.readers() : keys.lock()), bytes(token), bytes(leaseMillis));
        return reply.thenApply(result -> result == 1L);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        boolean shared = mode == LockMode.READ;
        CompletableFuture<Long> reply = eval(shared ? LockScript.RELEASE_SHARED : LockScript.RELEASE_EXCLUSIVE,
                ScriptOutputType.INTEGER, keys(shared ? keys.readers() : keys.lock()), bytes(token),
                bytes(keys.channel()));
        return reply.thenApply(result -> result == 1L);
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        CompletableFuture<Long> reply = eval(LockScript.IS_LOCKED, ScriptOutputType.INTEGER,
                keys(keys.lock(), keys.readers()));
        return reply.thenApply(result -> result == 1L);
    }

    @Override
    public void onRelease(Consumer<String> channelListener) {
        this.releaseListener = channelListener;
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return CompletableFuture.runAsync(() -> subscription().subscribe(bytes(channel)), subscriptionThread);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return CompletableFuture.runAsync(() -> {
            Subscription subscription = subscriptionConnection != null ? subscriptionConnection.getSubscription() : null;
            if (subscription != null && subscription.isAlive()) {
                subscription.unsubscribe(bytes(channel));
            }
        }, subscriptionThread);
    }

    /** Runs on the subscription thread only. */
    private Subscription subscription() {
        Subscription subscription = subscriptionConnection != null ? subscriptionConnection.getSubscription() : null;
        if (subscription != null && subscription.isAlive()) {
            return subscription;
        }
        closeQuietly(subscriptionConnection);
        subscriptionConnection = null;
        RedisConnection connection = connectionFactory.getConnection();
        try {
            // the keep-alive channel keeps the subscription open when no waiter needs a channel
            connection.subscribe(messageListener, keepAliveChannel);
        }
        catch (RuntimeException ex) {
            closeQuietly(connection);
            throw ex;
        }
        subscriptionConnection = connection;
        return connection.getSubscription();
    }

    /**
     * Release messages, and (re)subscription confirmations: Lettuce subscribes again after a reconnect,
     * and a release published while disconnected is lost, so a confirmation wakes the channel's waiters
     * to look again.
     */
    private final class ReleaseListener implements MessageListener, SubscriptionListener {

        @Override
        public void onMessage(Message message, byte[] pattern) {
            deliver(message.getChannel());
        }

        @Override
        public void onChannelSubscribed(byte[] channel, long count) {
            deliver(channel);
        }
    }

    private void deliver(byte[] channel) {
        try {
            releaseListener.accept(new String(channel, StandardCharsets.UTF_8));
        }
        catch (RuntimeException ex) {
            logger.error("Release listener failed", ex);
        }
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> eval(LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
        RedisClusterAsyncCommands<byte[], byte[]> commands;
        try {
            commands = commands();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<T> reply = ((CompletableFuture<T>) commands.evalsha(script.sha1(), type, keys, args)
            .toCompletableFuture());
        return reply.exceptionallyCompose(ex -> {
            if (isNoScript(ex)) {
                // first use of the script on this server: EVAL loads it into the script cache
                return (CompletableFuture<T>) commands.eval(script.body(), type, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(ex);
        });
    }

    private RedisClusterAsyncCommands<byte[], byte[]> commands() {
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

    private static boolean isNoScript(Throwable ex) {
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

    private static Grant toGrant(List<Object> reply) {
        long status = (Long) reply.get(0);
        long value = (Long) reply.get(1);
        return status == 1L ? Grant.granted(value) : Grant.refused(value);
    }

    private static byte[][] keys(String... keys) {
        byte[][] result = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            result[i] = bytes(keys[i]);
        }
        return result;
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static void closeQuietly(RedisConnection connection) {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (RuntimeException ex) {
                logger.debug("Closing a Redis connection failed", ex);
            }
        }
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
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("run_id:")) {
                return line.substring("run_id:".length()).trim();
            }
        }
        throw new IllegalStateException("INFO server gave no run_id");
    }

    @Override
    public void close() {
        try {
            subscriptionThread.submit(() -> {
                closeQuietly(subscriptionConnection);
                subscriptionConnection = null;
            }).get(5, java.util.concurrent.TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            logger.debug("Closing the subscription connection failed", ex);
        }
        subscriptionThread.shutdownNow();
        closeQuietly(dataConnection);
        dataConnection = null;
    }
}
