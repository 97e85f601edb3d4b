package dev.leasehold.engine.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.FairQueue;
import dev.leasehold.engine.Grant;
import dev.leasehold.engine.KeyState;
import dev.leasehold.engine.LockKeys;
import dev.leasehold.engine.LockServer;
import dev.leasehold.engine.LockServerException;
import dev.leasehold.engine.LockServerException.Kind;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
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
 * NOSCRIPT fallback runs before the next step of its key is sent. Each step borrows a connection from the
 * factory for its round trip only (a pool is never drained by connections held for good). A step is
 * bounded by the client's own timeout ({@code spring.data.redis.timeout}); a step queued behind a slow one
 * on its stripe waits for it. Release messages arrive through a {@code RedisMessageListenerContainer}
 * ({@link ContainerReleaseSubscriptions}).
 * <p>
 * Compared with {@link LettuceLockServer}, which pipelines every step on one connection, at most
 * {@code stripes} round trips are in flight at once, and each borrows a pooled connection.
 */
public class RedisTemplateLockServer implements LockServer {

    /** Enough to keep a 2-4 core JVM's Redis round trips overlapping without taking a pool's connections. */
    public static final int DEFAULT_STRIPES = 4;

    private static final Log logger = LogFactory.getLog(RedisTemplateLockServer.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ACQUIRE_EXCLUSIVE = LockScript.ACQUIRE_EXCLUSIVE.as(List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ACQUIRE_SHARED = LockScript.ACQUIRE_SHARED.as(List.class);

    private static final RedisScript<Long> RELEASE_EXCLUSIVE = LockScript.RELEASE_EXCLUSIVE.as(Long.class);

    private static final RedisScript<Long> RELEASE_SHARED = LockScript.RELEASE_SHARED.as(Long.class);

    private static final RedisScript<Long> RENEW_EXCLUSIVE = LockScript.RENEW_EXCLUSIVE.as(Long.class);

    private static final RedisScript<Long> RENEW_SHARED = LockScript.RENEW_SHARED.as(Long.class);

    private static final RedisScript<Long> IS_LOCKED = LockScript.IS_LOCKED.as(Long.class);

    private static final RedisScript<Long> WITHDRAW = LockScript.WITHDRAW.as(Long.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> RESERVE_FENCES = LockScript.RESERVE_FENCES.as(List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> INSPECT = LockScript.INSPECT.as(List.class);

    private final StringRedisTemplate template;

    private final ExecutorService[] stripes;

    private final ContainerReleaseSubscriptions subscriptions;

    private final AtomicBoolean publishRefusalLogged = new AtomicBoolean();

    /**
     * @param keyPrefix used to name the channel that keeps the shared subscription open between waits
     */
    public RedisTemplateLockServer(RedisConnectionFactory connectionFactory, String keyPrefix) {
        this(connectionFactory, keyPrefix, DEFAULT_STRIPES);
    }

    /**
     * @param stripes how many round trips may be in flight at once (each a thread and, while it runs, a
     * connection borrowed from the factory)
     */
    public RedisTemplateLockServer(RedisConnectionFactory connectionFactory, String keyPrefix, int stripes) {
        if (stripes < 1) {
            throw new IllegalArgumentException("stripes must be at least 1, not " + stripes);
        }
        this.template = new StringRedisTemplate(connectionFactory);
        this.stripes = new ExecutorService[stripes];
        for (int i = 0; i < stripes; i++) {
            String name = "leasehold-redis-" + i;
            this.stripes[i] = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, name);
                thread.setDaemon(true);
                return thread;
            });
        }
        this.subscriptions = new ContainerReleaseSubscriptions(connectionFactory, keyPrefix);
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, boolean joinQueue) {
        @SuppressWarnings("rawtypes")
        RedisScript<List> script = mode == LockMode.READ ? ACQUIRE_SHARED : ACQUIRE_EXCLUSIVE;
        return step(keys, () -> ScriptReplies.toGrant(template.execute(script,
                List.of(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(),
                        keys.queueExpiry()),
                token, Long.toString(leaseMillis), Long.toString(writerWaitingMillis), waiterId, "clock",
                joinQueue ? "1" : "", Long.toString(FairQueue.ENTRY_MILLIS), Integer.toString(FairQueue.FENCE_BLOCK))));
    }

    @Override
    public boolean queuesWaiters() {
        return true;
    }

    @Override
    public boolean reservesFences() {
        return true;
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        return step(keys, () -> ScriptReplies.toFenceBlock(template.execute(RESERVE_FENCES,
                List.of(keys.lock(), keys.fence(), keys.queue(), keys.queueExpiry()), token,
                Long.toString(leaseMillis), Integer.toString(FairQueue.FENCE_BLOCK))));
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        boolean shared = mode == LockMode.READ;
        return step(keys, () -> template.execute(shared ? RENEW_SHARED : RENEW_EXCLUSIVE,
                List.of(shared ? keys.readers() : keys.lock()), token, Long.toString(leaseMillis)) == 1L);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return release(keys, mode, token, 0);
    }

    /** With {@code keepMillis > 0} (a holdAtLeast not yet passed) the key stays taken that long instead. */
    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        boolean shared = mode == LockMode.READ;
        return step(keys, () -> {
            // "" = plain PUBLISH: the pattern subscription of ContainerReleaseSubscriptions receives it
            long result = template.execute(shared ? RELEASE_SHARED : RELEASE_EXCLUSIVE,
                    shared ? List.of(keys.readers(), keys.lock(), keys.queue(), keys.queueExpiry())
                            : List.of(keys.lock(), keys.queue(), keys.queueExpiry()),
                    token, keys.channel(), "", Long.toString(Math.max(0, keepMillis)), "queued",
                    Long.toString(FairQueue.CLAIM_MILLIS));
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
        return step(keys, () -> template.execute(WITHDRAW, List.of(keys.writerWaiting(), keys.lock(), keys.readers(),
                keys.queue(), keys.queueExpiry()), waiterId, keys.channel(), "", "queued",
                Long.toString(FairQueue.CLAIM_MILLIS)) == 1L);
    }

    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        return step(keys, () -> ScriptReplies.toKeyState(keys.logicalKey(), template.execute(INSPECT,
                List.of(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(),
                keys.queueExpiry()))));
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return step(keys, () -> template.execute(IS_LOCKED, List.of(keys.lock(), keys.readers())) == 1L);
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

    /** Runs a blocking round trip on the key's stripe; the future completes when it returned or failed. */
    private <T> CompletableFuture<T> step(LockKeys keys, Supplier<T> roundTrip) {
        Step<T> step = new Step<>(roundTrip);
        try {
            stripes[Math.floorMod(keys.lock().hashCode(), stripes.length)].execute(step);
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
                fail(translate(ex));
                return;
            }
            result.complete(value);
        }

        void fail(LockServerException failure) {
            result.completeExceptionally(failure);
        }
    }

    /**
     * Says what happened in the engine's terms: whether the command may still run decides a take-back.
     * Spring translates each client's errors into {@code DataAccessException}s; what they do not tell apart
     * (a connection that could not be opened, one that broke after the command was sent) is read from the
     * client's cause.
     */
    static LockServerException translate(Throwable ex) {
        Throwable cause = ex;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof LockServerException own) {
            return own;
        }
        String message = String.valueOf(cause.getMessage());
        if (isErrorReply(cause)) {
            return new LockServerException(Kind.REFUSED, message, cause);
        }
        if (cause instanceof QueryTimeoutException || hasCause(cause, java.net.SocketTimeoutException.class)
                || cause instanceof java.util.concurrent.TimeoutException) {
            return new LockServerException(Kind.NO_REPLY, message, cause);
        }
        if (cause instanceof IllegalStateException) {
            // Spring Data Redis: the connection factory was stopped or destroyed (the application is shutting down)
            return new LockServerException(Kind.UNAVAILABLE,
                    "the Redis connection factory is not running (" + cause.getMessage() + ")", cause);
        }
        if (cause instanceof RedisConnectionFailureException && neverSent(cause)) {
            return new LockServerException(Kind.UNAVAILABLE, message, cause);
        }
        // a connection that broke after the command went out (reset, end of stream): it may have run
        return new LockServerException(Kind.NO_REPLY, message, cause);
    }

    /** An error reply from Redis (Jedis's or Lettuce's own exception type somewhere in the causes). */
    private static boolean isErrorReply(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            for (Class<?> type = cause.getClass(); type != null; type = type.getSuperclass()) {
                String name = type.getName();
                if (name.equals("redis.clients.jedis.exceptions.JedisDataException")
                        || name.equals("io.lettuce.core.RedisCommandExecutionException")) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** No connection could be opened (refused, unknown host, no pooled connection to borrow). */
    private static boolean neverSent(Throwable ex) {
        return hasCause(ex, java.net.ConnectException.class) || hasCause(ex, java.net.UnknownHostException.class)
                || hasCause(ex, java.net.NoRouteToHostException.class)
                || hasCause(ex, java.util.NoSuchElementException.class);
    }

    private static boolean hasCause(Throwable ex, Class<? extends Throwable> type) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Lets the steps already queued run (the engine's last releases), bounded, then fails what is left and
     * stops the subscription.
     */
    @Override
    public void close() {
        subscriptions.close();
        for (ExecutorService stripe : stripes) {
            stripe.shutdown();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<Runnable> neverRun = new ArrayList<>();
        for (ExecutorService stripe : stripes) {
            try {
                if (!stripe.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    neverRun.addAll(stripe.shutdownNow());
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                neverRun.addAll(stripe.shutdownNow());
            }
        }
        for (Runnable runnable : neverRun) {
            if (runnable instanceof Step<?> step) {
                step.fail(new LockServerException(Kind.UNAVAILABLE, "the lock server closed before the step ran", null));
            }
        }
    }
}
