package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.ServerVersion;
import dev.leasehold.engine.support.StarterThreads;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.RedisPubSubListener;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The one subscription connection of a JVM for release messages, opened with the Lettuce client that
 * Spring Data Redis built from {@code spring.data.redis.*} (so it reaches the same server, Sentinel master
 * or Cluster, with the same credentials and TLS).
 * <p>
 * Lettuce reconnects and subscribes again by itself, but when the server refuses the new subscription
 * (an ACL change, a failover to a server with other rules) it says nothing, and a release published
 * meanwhile is lost. So the engine is told when the connection drops ({@code onLost}), and every
 * confirmation of a (re)subscription is delivered like a release message, so waiters look again.
 * Connecting runs on one thread of its own, and so do (un)subscribe commands, which keeps them in order.
 */
final class ReleaseSubscriptions extends ReleaseChannels {

    private static final Log logger = LogFactory.getLog(ReleaseSubscriptions.class);

    private final LettuceConnectionFactory connectionFactory;

    private final byte[] keepAliveChannel;

    private final ExecutorService thread;

    private final Listener listener = new Listener();


    /** Only touched on {@link #thread}. */
    private @Nullable StatefulRedisPubSubConnection<byte[], byte[]> connection;

    /**
     * Whether channels are sharded (SSUBSCRIBE): on a Cluster of Redis 7+ or Valkey, decided when connecting by
     * the server's name and own version ({@link ServerVersion}).
     */
    private volatile boolean sharded;

    /** Channels this JVM wants now: a server-side unsubscribe of one of them means its messages are lost. */
    private final java.util.Set<String> wanted = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private volatile boolean closed;

    /** The thread of the last connect (see {@link #open}), waited for by close(). */
    private volatile @Nullable Thread opener;

    /** Whether the client is a Cluster client, once known: the client Spring Data Redis built never changes. */
    private volatile @Nullable Boolean clustered;

    /** What {@link #announce} logged last; only touched on {@link #thread}. */
    private @Nullable String announced;

    private final StarterThreads threads = new StarterThreads("leasehold-subscriptions");

    ReleaseSubscriptions(LettuceConnectionFactory connectionFactory, String keyPrefix) {
        this.connectionFactory = connectionFactory;
        // keeps the connection subscribed (and so watched) between waits
        this.keepAliveChannel = LettuceScripts.bytes(keyPrefix + "leasehold:subscription");
        this.thread = Executors.newSingleThreadExecutor(threads);
    }

    /** Whether the server is a Redis Cluster (known without I/O, from the client Spring Data Redis built). */
    boolean clustered() {
        Boolean known = clustered;
        if (known == null) {
            try {
                known = connectionFactory.getRequiredNativeClient() instanceof RedisClusterClient;
            }
            catch (IllegalStateException ex) {
                // the factory was stopped or destroyed: said as such, not as a failed call (every try asks this)
                throw LettuceScripts.translate(ex);
            }
            clustered = known;
        }
        return known;
    }

    /** Opens the connection ahead of the first subscription, on {@link #thread}; a failure waits for that one. */
    void prepare() {
        try {
            thread.execute(() -> {
                try {
                    if (!closed) {
                        connection();
                    }
                }
                catch (RuntimeException ex) {
                    logger.debug("Opening the subscription connection ahead failed; the first subscription tries again", ex);
                }
            });
        }
        catch (java.util.concurrent.RejectedExecutionException ex) {
            // closed meanwhile
        }
    }

    CompletableFuture<Void> subscribe(String channel) {
        wanted.add(channel);
        CompletableFuture<Void> confirmed = CompletableFuture.supplyAsync(() -> {
            StatefulRedisPubSubConnection<byte[], byte[]> current = connection();
            byte[] name = LettuceScripts.bytes(channel);
            return sharded ? current.async().ssubscribe(name) : current.async().subscribe(name);
        }, thread).thenCompose(reply -> reply.toCompletableFuture());
        return confirmed.exceptionallyCompose(ex -> {
            LockServerException failure = LettuceScripts.translate(ex);
            if (failure.kind() == LockServerException.Kind.REFUSED) {
                refused("to subscribe to " + channel, String.valueOf(failure.getCause() != null ? failure.getCause().getMessage() : failure.getMessage()), "<leasehold.key-prefix>*");
            }
            return CompletableFuture.failedFuture(failure);
        });
    }

    CompletableFuture<Void> unsubscribe(String channel) {
        wanted.remove(channel);
        return CompletableFuture.supplyAsync(() -> {
            if (isOpen()) {
                byte[] name = LettuceScripts.bytes(channel);
                StatefulRedisPubSubConnection<byte[], byte[]> open = Objects.requireNonNull(connection, "open");
                if (sharded) {
                    open.async().sunsubscribe(name);
                }
                else {
                    open.async().unsubscribe(name);
                }
            }
            return null;
        }, thread);
    }

    /** Runs on {@link #thread} only. */
    private StatefulRedisPubSubConnection<byte[], byte[]> connection() {
        if (closed) {
            throw new IllegalStateException("the lock server is closed");
        }
        if (isOpen()) {
            return Objects.requireNonNull(connection, "open"); // possibly reconnecting: Lettuce queues the command until it is back
        }
        if (!connectionFactory.isRunning()) {
            // stopping or stopped: a connect now would race the client's shutdown (Netty: "Event loop shut down?")
            throw new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "the Redis connection factory is not running", null);
        }
        AbstractRedisClient client = connectionFactory.getRequiredNativeClient();
        StatefulRedisPubSubConnection<byte[], byte[]> opened = open(client);
        if (closed) {
            // closed while it opened: nobody else will close it
            opened.close();
            throw new IllegalStateException("the lock server is closed");
        }
        if (client instanceof RedisClusterClient) {
            // asked on a Cluster only, where it decides (an ACL user elsewhere needs no INFO), before the first
            // subscription (a subscribed RESP2 connection takes no INFO)
            ServerVersion server = ServerVersion.parse(opened.sync().info("server"));
            sharded = server != null && server.hasShardedPubSub();
            announce(server);
        }
        opened.addListener((RedisPubSubListener<byte[], byte[]>) listener);
        opened.addListener((RedisConnectionStateListener) listener);
        opened.async().subscribe(keepAliveChannel);
        connection = opened;
        return opened;
    }

    /** Once, and again only if the servers changed (a failover to another version): what decided the channels. */
    private void announce(@Nullable ServerVersion server) {
        String described = (server == null ? "a Cluster whose server names no version" : "a Cluster of " + server)
                + (sharded ? ": sharded pub/sub (SSUBSCRIBE, SPUBLISH)" : ": no sharded pub/sub (SUBSCRIBE, PUBLISH)");
        if (!described.equals(announced)) {
            announced = described;
            logger.info("Leasehold's release messages: " + described);
        }
    }

    /** Not closed (it may be reconnecting); on {@link #thread} only. */
    private boolean isOpen() {
        return connection != null && !((RedisChannelHandler<?, ?>) connection).isClosed();
    }

    /**
     * Connects on a thread of its own, waited for here: an interrupt of {@link #thread} (close() past its
     * patience, Redis not answering the handshake) ends the wait but not Lettuce's connect, so the connection
     * that comes late is closed when it comes instead of staying open with nobody to close it. The wait is
     * bounded by the client's connect timeout (and a second): a connect whose channel the client's event loop
     * refused (the client shutting down) is never completed by Lettuce.
     */
    private StatefulRedisPubSubConnection<byte[], byte[]> open(AbstractRedisClient client) {
        CompletableFuture<StatefulRedisPubSubConnection<byte[], byte[]>> opening = new CompletableFuture<>();
        Thread opener = new Thread(() -> {
            try {
                opening.complete(client instanceof RedisClusterClient cluster ? cluster.connectPubSub(ByteArrayCodec.INSTANCE)
                        : ((RedisClient) client).connectPubSub(ByteArrayCodec.INSTANCE));
            }
            catch (RuntimeException | Error ex) {
                opening.completeExceptionally(ex);
            }
        }, "leasehold-subscription-opener");
        opener.setDaemon(true);
        this.opener = opener;
        opener.start();
        Duration patience = client.getOptions().getSocketOptions().getConnectTimeout().plusSeconds(1);
        try {
            return opening.get(patience.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            opening.thenAccept(StatefulRedisPubSubConnection::close);
            Thread.currentThread().interrupt();
            throw new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "interrupted while the subscription connection was opening", ex);
        }
        catch (java.util.concurrent.TimeoutException ex) {
            opening.thenAccept(StatefulRedisPubSubConnection::close);
            throw new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "the subscription connection did not open within " + patience.toMillis() + " ms", ex);
        }
        catch (ExecutionException ex) {
            Throwable cause = Objects.requireNonNullElse(ex.getCause(), ex);
            throw cause instanceof RuntimeException runtime ? runtime : new IllegalStateException(cause);
        }
    }

    void close() {
        closed = true;
        try {
            thread.submit(() -> {
                StatefulRedisPubSubConnection<byte[], byte[]> open = connection;
                if (open != null && isOpen()) {
                    open.close();
                }
                connection = null;
            }).get(5, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            logger.debug("Closing the subscription connection failed", ex);
        }
        threads.stop(thread, Duration.ofSeconds(5), true);
        Thread connecting = opener;
        if (connecting != null) {
            try {
                // a connect still on its way ends (and its connection is closed) before close() returns, bounded
                connecting.join(5000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final class Listener extends RedisPubSubAdapter<byte[], byte[]> implements RedisConnectionStateListener {

        @Override
        public void message(byte[] channel, byte[] message) {
            deliver(channel);
        }

        @Override
        public void subscribed(byte[] channel, long count) {
            deliver(channel);
        }

        @Override
        public void smessage(byte[] channel, byte[] message) {
            deliver(channel);
        }

        @Override
        public void ssubscribed(byte[] channel, long count) {
            deliver(channel);
        }

        @Override
        public void sunsubscribed(byte[] channel, long count) {
            // Redis drops a sharded subscription when its slot moves to another node (resharding, failover)
            if (wanted.contains(new String(channel, StandardCharsets.UTF_8))) {
                onRedisDisconnected(null);
            }
        }

        @Override
        public void onRedisDisconnected(@Nullable RedisChannelHandler<?, ?> connection) {
            if (!closed) {
                lost();
            }
        }
    }
}
