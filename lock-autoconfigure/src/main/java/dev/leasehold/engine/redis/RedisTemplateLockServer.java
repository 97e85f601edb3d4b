package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.LockServerException.Kind;

import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The per-server steps through Spring Data Redis's {@link StringRedisTemplate}, so they work with any
 * {@link RedisConnectionFactory}: Jedis (pooled or not, standalone, Sentinel or Cluster) as well as Lettuce.
 * The scripts are the same {@code .lua} resources as {@link LettuceLockServer}'s, sent as EVALSHA with an
 * EVAL on NOSCRIPT (what {@code RedisTemplate.execute(RedisScript, ...)} does).
 * <p>
 * These clients block the calling thread, so steps run on a few stripes, each a single thread: a key
 * always goes to the same stripe, so steps on one key run in the order they were called, and a step's
 * NOSCRIPT fallback runs before the next step of its key is sent. On a Cluster each master has stripes of its
 * own ({@link Stripes}), so a master that stops answering delays only its own keys' steps. Each step borrows a
 * connection from the factory for its round trip only (a pool is never drained by connections held for good). A
 * step is bounded by the client's own timeout ({@code spring.data.redis.timeout}); a step queued behind a slow
 * one on its stripe waits for it. An acknowledged write holds its connection for the script and the {@code WAIT}
 * behind it (standalone and Sentinel; on a Cluster each command may borrow another connection, so replica
 * acknowledgement there needs the Lettuce client). Release messages arrive through a
 * {@code RedisMessageListenerContainer} ({@link ContainerReleaseSubscriptions}).
 * <p>
 * Compared with {@link LettuceLockServer}, which pipelines every step on one connection, at most
 * {@code stripes} round trips are in flight at once, and each borrows a pooled connection.
 */
public class RedisTemplateLockServer extends ScriptedLockServer {

    /** Enough to keep a 2-4 core JVM's Redis round trips overlapping without taking a pool's connections. */
    public static final int DEFAULT_STRIPES = 4;

    private static final Map<LockScript, RedisScript<?>> LISTS = new ConcurrentHashMap<>();

    private static final Map<LockScript, RedisScript<?>> NUMBERS = new ConcurrentHashMap<>();

    private final StringRedisTemplate template;

    private final Stripes stripes;

    private final ContainerReleaseSubscriptions subscriptions;

    /** Guarded by this. */
    private boolean closed;

    /**
     * @param keyPrefix used to name the channel that keeps the shared subscription open between waits
     */
    public RedisTemplateLockServer(RedisConnectionFactory connectionFactory, String keyPrefix) {
        this(connectionFactory, keyPrefix, DEFAULT_STRIPES, 0, Duration.ofMillis(100));
    }

    /**
     * @param stripes how many round trips may be in flight at once (each a thread and, while it runs, a
     * connection borrowed from the factory)
     * @param ackReplicas how many replicas must acknowledge (Redis {@code WAIT}) a grant or renewal before it
     * counts ({@code leasehold.replica-ack.replicas}); 0 for none
     * @param ackTimeout how long to wait for them ({@code leasehold.replica-ack.timeout})
     */
    public RedisTemplateLockServer(RedisConnectionFactory connectionFactory, String keyPrefix, int stripes,
            int ackReplicas, Duration ackTimeout) {
        super(ackReplicas, ackTimeout, false);
        if (stripes < 1) {
            throw new IllegalArgumentException("stripes must be at least 1, not " + stripes);
        }
        this.template = new StringRedisTemplate(connectionFactory);
        this.stripes = Stripes.of(connectionFactory, stripes);
        this.subscriptions = new ContainerReleaseSubscriptions(connectionFactory, keyPrefix);
    }

    /** Whether the factory talks to a Cluster, as its stripes know it (no I/O; until known: per slot, right anywhere). */
    @Override
    protected boolean clustered() {
        return stripes.mayBeCluster();
    }

    /** On a Cluster, from the topology the stripes learnt (no I/O); null before it is known. */
    @Override
    protected @Nullable IntUnaryOperator masters() {
        return stripes.masters();
    }

    /** A batch per master at once on a Cluster (each master's on its own stripes). */
    @Override
    public int renewalsPerCall() {
        return Math.max(1, stripes.masterCount()) * super.renewalsPerCall();
    }

    @Override
    @SuppressWarnings("unchecked")
    protected <T> CompletableFuture<T> eval(LockScript script, Reply reply, List<String> keys, List<String> args) {
        RedisScript<T> redisScript = (RedisScript<T>) (reply == Reply.LIST
                ? LISTS.computeIfAbsent(script, each -> each.as(List.class))
                : NUMBERS.computeIfAbsent(script, each -> each.as(Long.class)));
        return step(keys.get(0), () -> template.execute(redisScript, keys, args.toArray()));
    }

    /** The script and a {@code WAIT} behind it on one borrowed connection, which WAIT then covers. */
    @Override
    @SuppressWarnings("unchecked")
    protected <T> CompletableFuture<Acknowledged<T>> evalAcknowledged(LockScript script, Reply reply,
            List<String> keys, List<String> args, int replicas, Duration timeout) {
        return step(keys.get(0), () -> template.execute((RedisCallback<Acknowledged<T>>) connection -> {
            if (connection instanceof RedisClusterConnection) {
                throw new LockServerException(Kind.REFUSED, "leasehold.replica-ack.replicas on a Redis Cluster needs "
                        + "the Lettuce client (Spring Boot's default): this client may send the WAIT on another "
                        + "connection than the write", null);
            }
            T value = (T) evalOnConnection(connection, script, reply, keys, args);
            Object acknowledged = connection.execute("WAIT", bytes(Integer.toString(replicas)),
                    bytes(Long.toString(timeout.toMillis())));
            return new Acknowledged<>(value, ((Number) acknowledged).longValue());
        }));
    }

    private static Object evalOnConnection(RedisConnection connection, LockScript script, Reply reply, List<String> keys,
            List<String> args) {
        ReturnType type = reply == Reply.LIST ? ReturnType.MULTI : ReturnType.INTEGER;
        List<byte[]> keysAndArgs = new ArrayList<>(keys.size() + args.size());
        keys.forEach(key -> keysAndArgs.add(bytes(key)));
        args.forEach(arg -> keysAndArgs.add(bytes(arg)));
        byte[][] values = keysAndArgs.toArray(byte[][]::new);
        try {
            return connection.scriptingCommands().evalSha(script.sha1(), type, keys.size(), values);
        }
        catch (DataAccessException ex) {
            if (!TemplateErrors.isNoScript(ex)) {
                throw ex;
            }
            return connection.scriptingCommands().eval(script.body(), type, keys.size(), values);
        }
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
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

    /** Runs a blocking round trip on the key's stripe; the future completes when it returned or failed. */
    private <T> CompletableFuture<T> step(String lockKey, Supplier<T> roundTrip) {
        Step<T> step = new Step<>(roundTrip);
        try {
            stripes.execute(lockKey, step);
        }
        catch (RejectedExecutionException ex) {
            step.fail(new LockServerException(Kind.UNAVAILABLE, "the lock server is closed", ex));
        }
        return step.result;
    }

    private static final class Step<T> implements Runnable {

        final CompletableFuture<T> result = new CompletableFuture<>();

        private final Supplier<T> roundTrip;

        Step(Supplier<T> roundTrip) {
            this.roundTrip = roundTrip;
        }

        @Override
        public void run() {
            T value;
            try {
                value = roundTrip.get();
            }
            catch (Throwable ex) {
                fail(TemplateErrors.translate(ex));
                return;
            }
            result.complete(value);
        }

        void fail(LockServerException failure) {
            result.completeExceptionally(failure);
        }
    }

    /**
     * Lets the steps already queued run (the engine's last releases), bounded, then fails what is left and
     * stops the subscription. Idempotent (the engine's lifecycle closes it, then its destroy method).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        subscriptions.close();
        for (Runnable runnable : stripes.shutdown(Duration.ofSeconds(5))) {
            if (runnable instanceof Step<?> step) {
                step.fail(new LockServerException(Kind.UNAVAILABLE, "the lock server closed before the step ran", null));
            }
        }
    }
}
