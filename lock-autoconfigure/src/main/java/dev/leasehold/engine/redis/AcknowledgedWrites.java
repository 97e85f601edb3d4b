package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

import dev.leasehold.engine.StarterThreads;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Script calls that count only once {@code replicas} replicas acknowledged them (Redis {@code WAIT}).
 * <p>
 * {@code WAIT} blocks the connection it runs on, and acknowledges every earlier write of that
 * connection. So these calls go on a connection of their own (per Cluster node), never on the one the
 * other steps share, and each script is pipelined right in front of its {@code WAIT}: one round trip,
 * and calls that arrive together are acknowledged together (a {@code WAIT} whose writes an earlier one
 * already covered answers at once). A release goes the same way, unacknowledged, to keep the order of
 * steps on one key.
 */
final class AcknowledgedWrites implements AutoCloseable {

    /** The reply of a script and how many replicas acknowledged it. */
    record Reply<T>(T value, long acknowledgements) {
    }

    private final LettuceConnectionFactory connectionFactory;

    private final int replicas;

    private final Duration timeout;

    private final ReentrantLock connectLock = new ReentrantLock();

    private final StarterThreads connectorThreads = new StarterThreads("leasehold-replica-ack-connect");

    private final ExecutorService connector = Executors.newSingleThreadExecutor(connectorThreads);

    private volatile StatefulConnection<byte[], byte[]> connection;

    AcknowledgedWrites(LettuceConnectionFactory connectionFactory, int replicas, Duration timeout) {
        this.connectionFactory = connectionFactory;
        this.replicas = replicas;
        this.timeout = timeout;
    }

    int replicas() {
        return replicas;
    }

    Duration timeout() {
        return timeout;
    }

    /** Runs the script, then {@code WAIT}s for the replicas; the reply carries how many acknowledged. */
    <T> CompletableFuture<Reply<T>> evalAcknowledged(LockScript script, ScriptOutputType type, byte[][] keys,
            byte[]... args) {
        return commandsFor(keys[0]).thenCompose(commands -> {
            CompletableFuture<T> value = eval(commands, script, type, keys, args);
            CompletableFuture<Long> acknowledged = commands.waitForReplication(replicas, timeout.toMillis())
                .toCompletableFuture();
            return value.thenCombine(acknowledged, Reply::new).exceptionallyCompose(ex -> {
                if (!LettuceLockServer.isNoScript(ex)) {
                    return CompletableFuture.failedFuture(ex);
                }
                // the script cache was empty: EVAL, then WAIT again behind it
                CompletableFuture<T> loaded = evalBody(commands, script, type, keys, args);
                return loaded.thenCombine(commands.waitForReplication(replicas, timeout.toMillis()).toCompletableFuture(),
                        Reply::new);
            });
        });
    }

    /** Runs the script on the same connection without waiting for replicas (a release, a take-back). */
    <T> CompletableFuture<T> eval(LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
        return commandsFor(keys[0]).thenCompose(commands -> {
            CompletableFuture<T> value = eval(commands, script, type, keys, args);
            return value.exceptionallyCompose(ex -> LettuceLockServer.isNoScript(ex)
                    ? AcknowledgedWrites.<T>evalBody(commands, script, type, keys, args)
                    : CompletableFuture.<T>failedFuture(ex));
        });
    }

    @SuppressWarnings("unchecked")
    private static <T> CompletableFuture<T> eval(RedisAsyncCommands<byte[], byte[]> commands, LockScript script,
            ScriptOutputType type, byte[][] keys, byte[]... args) {
        return (CompletableFuture<T>) commands.evalsha(script.sha1(), type, keys, args).toCompletableFuture();
    }

    @SuppressWarnings("unchecked")
    private static <T> CompletableFuture<T> evalBody(RedisAsyncCommands<byte[], byte[]> commands, LockScript script,
            ScriptOutputType type, byte[][] keys, byte[]... args) {
        return (CompletableFuture<T>) commands.eval(script.body(), type, keys, args).toCompletableFuture();
    }

    /** The connection to the server (on Cluster: the node) that holds the key; connects off the caller's thread. */
    private CompletableFuture<RedisAsyncCommands<byte[], byte[]>> commandsFor(byte[] key) {
        StatefulConnection<byte[], byte[]> current = connection;
        if (current != null) {
            try {
                return CompletableFuture.completedFuture(commands(current, key));
            }
            catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        try {
            return CompletableFuture.supplyAsync(() -> commands(connect(), key), connector);
        }
        catch (java.util.concurrent.RejectedExecutionException ex) {
            return CompletableFuture.failedFuture(new IllegalStateException("the lock server is closed", ex));
        }
    }

    private StatefulConnection<byte[], byte[]> connect() {
        connectLock.lock();
        try {
            if (connection == null) {
                AbstractRedisClient client = connectionFactory.getRequiredNativeClient();
                connection = client instanceof RedisClusterClient cluster ? cluster.connect(ByteArrayCodec.INSTANCE)
                        : ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
            }
            return connection;
        }
        finally {
            connectLock.unlock();
        }
    }

    @SuppressWarnings("unchecked")
    private static RedisAsyncCommands<byte[], byte[]> commands(StatefulConnection<byte[], byte[]> connection,
            byte[] key) {
        if (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
            // WAIT only covers writes on the node it runs on: address the node that owns the key's slot
            RedisClusterNode node = cluster.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            if (node == null) {
                throw new CompletionException(new IllegalStateException("no Cluster node owns the slot of the key"));
            }
            StatefulRedisConnection<byte[], byte[]> nodeConnection = cluster.getConnection(node.getNodeId());
            return nodeConnection.async();
        }
        return ((StatefulRedisConnection<byte[], byte[]>) connection).async();
    }

    @Override
    public void close() {
        connectorThreads.stop(connector, timeout.plusSeconds(5), true);
        StatefulConnection<byte[], byte[]> current = connection;
        connection = null;
        if (current != null) {
            current.close();
        }
    }
}
