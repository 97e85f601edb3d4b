package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

import dev.leasehold.engine.redis.ScriptedLockServer.Acknowledged;
import dev.leasehold.engine.redis.ScriptedLockServer.Reply;
import dev.leasehold.engine.support.StarterThreads;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Script calls that count only once enough replicas acknowledged them (Redis {@code WAIT}), on Lettuce.
 * <p>
 * {@code WAIT} blocks the connection it runs on, and acknowledges every earlier write of that
 * connection. So these calls go on a connection of their own (per Cluster node), never on the one the
 * other steps share, and each script is pipelined right in front of its {@code WAIT}: one round trip,
 * and calls that arrive together are acknowledged together (a {@code WAIT} whose writes an earlier one
 * already covered answers at once). A release goes the same way, unacknowledged, to keep the order of
 * steps on one key.
 */
final class AcknowledgedWrites implements AutoCloseable {

    private static final Log logger = LogFactory.getLog(AcknowledgedWrites.class);

    private final LettuceConnectionFactory connectionFactory;

    private final ReentrantLock connectLock = new ReentrantLock();

    private final StarterThreads connectorThreads = new StarterThreads("leasehold-replica-ack-connect");

    private final ExecutorService connector = Executors.newSingleThreadExecutor(connectorThreads);

    private volatile @Nullable StatefulConnection<byte[], byte[]> connection;

    AcknowledgedWrites(LettuceConnectionFactory connectionFactory) {
        this.connectionFactory = connectionFactory;
    }

    /**
     * Runs the script, then {@code WAIT}s for the replicas, pipelined; the reply carries how many acknowledged. A
     * NOSCRIPT fallback's EVAL, sent after that WAIT, gets a WAIT of its own. Fails with a LockServerException.
     */
    <T> CompletableFuture<Acknowledged<T>> evalAcknowledged(LockScript script, Reply reply, List<String> keys,
            List<String> args, int replicas, Duration timeout) {
        return commandsFor(keys.get(0)).thenCompose(commands -> {
            CompletableFuture<Boolean> cached = new CompletableFuture<>();
            CompletableFuture<T> value = LettuceScripts.<T>eval(commands, script, reply, keys, args, cached);
            CompletableFuture<Long> acknowledged = commands.waitForReplication(replicas, timeout.toMillis())
                .toCompletableFuture();
            return value.thenCompose(result -> cached.getNow(true)
                    ? acknowledged.thenApply(count -> new Acknowledged<>(result, count))
                    : commands.waitForReplication(replicas, timeout.toMillis()).toCompletableFuture()
                        .thenApply(count -> new Acknowledged<>(result, count)));
        }).exceptionallyCompose(ex -> CompletableFuture.failedFuture(LettuceScripts.translate(ex)));
    }

    /** Runs the script on the same connection without waiting for replicas (a release, a take-back). */
    <T> CompletableFuture<T> eval(LockScript script, Reply reply, List<String> keys, List<String> args) {
        return commandsFor(keys.get(0))
            .thenCompose(commands -> LettuceScripts.<T>eval(commands, script, reply, keys, args, null))
            .exceptionallyCompose(ex -> CompletableFuture.failedFuture(LettuceScripts.translate(ex)));
    }

    /** The connection to the server (on Cluster: the node) that holds the key; connects off the caller's thread. */
    private CompletableFuture<RedisAsyncCommands<byte[], byte[]>> commandsFor(String key) {
        StatefulConnection<byte[], byte[]> current = connection;
        if (current != null) {
            try {
                return CompletableFuture.completedFuture(commands(current, LettuceScripts.bytes(key)));
            }
            catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        try {
            return CompletableFuture.supplyAsync(() -> commands(connect(), LettuceScripts.bytes(key)), connector);
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
        connectorThreads.stop(connector, Duration.ofSeconds(5), true);
        StatefulConnection<byte[], byte[]> current = connection;
        connection = null;
        if (current != null) {
            // bounded: Lettuce's close() can wait forever on a connection that is reconnecting (seen in the
            // campaign with the primary restarted and the replica paused); shutdown must not hang on it
            try {
                current.closeAsync().get(5, java.util.concurrent.TimeUnit.SECONDS);
            }
            catch (Exception ex) {
                if (ex instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                logger.warn("The replica-acknowledgement connection did not close within 5 s; left to the driver", ex);
            }
        }
    }
}
