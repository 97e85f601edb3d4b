package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.StarterThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.PatternTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Release messages for {@link RedisTemplateLockServer} through one Spring Data Redis
 * {@link RedisMessageListenerContainer}, started at the first wait: one subscription connection of the
 * factory, whatever the client.
 * <p>
 * The container holds one pattern subscription, {@code <leasehold.key-prefix>*} (the pattern that the
 * documented ACL rule {@code &<leasehold.key-prefix>*} allows), and never adds or removes topics while it
 * listens: adding a topic to a listening container waits, without a bound, until Redis confirms it, which
 * never happens when Redis refused the subscription. So a channel counts as subscribed while the pattern
 * is; the cost is that every release under the prefix reaches every JVM (the engine ignores the channels
 * nobody waits on), where the Lettuce server subscribes only the channels that have waiters.
 * <p>
 * The engine is told when the subscription failed ({@code onLost}); the container subscribes again after a
 * back-off, and when Redis refused the subscription (an ACL without channel rights, which an administrator
 * may fix), on which the container gives up, a new container takes over; every confirmation is delivered for each channel with waiters like a release message, so
 * they look again.
 */
final class ContainerReleaseSubscriptions extends ReleaseChannels {

    private static final Log logger = LogFactory.getLog(ContainerReleaseSubscriptions.class);

    /** How long a subscription may stay unconfirmed before its future fails (the engine subscribes again). */
    private static final long CONFIRMATION_TIMEOUT_MILLIS = 10_000;

    /** The longest pause between two tries to subscribe again (from 100 ms, doubling). */
    private static final long MAX_RECOVERY_INTERVAL_MILLIS = 3_000;

    private static final long MIN_RESTART_DELAY_MILLIS = 500;

    private final RedisConnectionFactory connectionFactory;

    private final PatternTopic pattern;

    /** Starts (and restarts) the container, which waits, bounded, for its subscription, off the caller's thread. */
    private final ScheduledExecutorService starter;

    private final Listener listener = new Listener();

    /** The channels that have waiters: each is told when the pattern is confirmed again. */
    private final Set<String> channels = ConcurrentHashMap.newKeySet();

    /** Completes when the pattern subscription is confirmed; replaced by a pending one when it is lost. */
    private final AtomicReference<CompletableFuture<Void>> confirmed = new AtomicReference<>(new CompletableFuture<>());

    private final AtomicBoolean started = new AtomicBoolean();


    private volatile @Nullable Container container;

    private volatile long restartDelayMillis = MIN_RESTART_DELAY_MILLIS;

    private volatile boolean closed;

    private final StarterThreads starterThreads = new StarterThreads("leasehold-subscriptions");

    ContainerReleaseSubscriptions(RedisConnectionFactory connectionFactory, String keyPrefix) {
        this.connectionFactory = connectionFactory;
        this.pattern = new PatternTopic(keyPrefix + "*");
        this.starter = Executors.newSingleThreadScheduledExecutor(starterThreads);
    }

    CompletableFuture<Void> subscribe(String channel) {
        channels.add(channel);
        if (closed) {
            return CompletableFuture.failedFuture(
                    new LockServerException(LockServerException.Kind.UNAVAILABLE, "the lock server is closed", null));
        }
        startOnce();
        return Objects.requireNonNull(confirmed.get())
            .copy()
            .orTimeout(CONFIRMATION_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
            .exceptionallyCompose(ex -> CompletableFuture.failedFuture(TemplateErrors.translate(ex)));
    }

    /** Starts the container (its pattern subscription) ahead of the first wait, in the background. */
    void prepare() {
        if (!closed) {
            startOnce();
        }
    }

    CompletableFuture<Void> unsubscribe(String channel) {
        channels.remove(channel);
        return CompletableFuture.completedFuture(null);
    }

    private void startOnce() {
        if (started.compareAndSet(false, true)) {
            try {
                starter.execute(this::startContainer);
            }
            catch (RejectedExecutionException ex) {
                // closed meanwhile
            }
        }
    }

    /** Runs on {@link #starter}. */
    private void startContainer() {
        if (closed) {
            return;
        }
        Container created = new Container();
        created.addMessageListener(listener, pattern);
        container = created;
        created.start(); // with a blocking client: waits (bounded) until the subscription runs
    }

    /**
     * The container recovers from connection failures by itself but gives up on anything else, such as a
     * refused subscription (NOPERM: an ACL without channel rights, which an administrator may fix): a new
     * container takes over after a back-off.
     */
    private void restartLater(Container failed) {
        long delay = restartDelayMillis;
        restartDelayMillis = Math.min(MAX_RECOVERY_INTERVAL_MILLIS, delay * 2);
        try {
            starter.schedule(() -> {
                if (container != failed || closed) {
                    return;
                }
                container = null;
                try {
                    failed.destroy();
                }
                catch (Exception ex) {
                    logger.debug("Stopping the failed subscription container failed", ex);
                }
                try {
                    startContainer();
                }
                catch (RuntimeException ex) {
                    // e.g. "Subscription registration timeout exceeded": try again with a new one
                    logger.debug("Restarting the release subscription failed", ex);
                    Container current = container;
                    if (current != null) {
                        restartLater(current);
                    }
                }
            }, delay, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // closed meanwhile
        }
    }

    private void lost(Throwable cause) {
        LockServerException failure = TemplateErrors.translate(cause);
        // fails the subscriptions waiting for a confirmation (the engine subscribes again); later ones wait
        confirmed.getAndSet(new CompletableFuture<>()).completeExceptionally(failure);
        if (closed) {
            return;
        }
        if (failure.kind() == LockServerException.Kind.REFUSED) {
            refused("the release subscription", String.valueOf(cause.getMessage()), pattern.getTopic());
        }
        lost();
    }

    private void confirmedAgain() {
        Objects.requireNonNull(confirmed.get()).complete(null);
        // a release may have been missed while the pattern was not subscribed: the waiters look again
        channels.forEach(channel -> deliver(channel.getBytes(StandardCharsets.UTF_8)));
    }

    void close() {
        closed = true;
        starterThreads.stop(starter, Duration.ofSeconds(5), true); // a start not begun yet never begins
        Container current = container;
        if (current != null) {
            try {
                current.destroy();
            }
            catch (Exception ex) {
                logger.debug("Closing the subscription container failed", ex);
            }
        }
        Objects.requireNonNull(confirmed.get()).completeExceptionally(
                new LockServerException(LockServerException.Kind.UNAVAILABLE, "the lock server is closed", null));
    }


    /** Learns about subscription failures, which the container otherwise only logs. */
    private final class Container extends RedisMessageListenerContainer {

        /**
         * The application's factory, or one made for this container ({@link SubscriptionConnectionFactory}):
         * a container that failed may leave replies on its connection, which a new one must not read.
         */
        private final RedisConnectionFactory subscriptionFactory = SubscriptionConnectionFactory.of(connectionFactory);

        Container() {
            setConnectionFactory(subscriptionFactory);
            // the listener only hands the channel on (it must not block): no thread per message
            setTaskExecutor(Runnable::run);
            SimpleAsyncTaskExecutor subscriber = new SimpleAsyncTaskExecutor("leasehold-release-listener-");
            subscriber.setDaemon(true);
            setSubscriptionExecutor(subscriber);
            ExponentialBackOff recovery = new ExponentialBackOff(100, 2);
            recovery.setMaxInterval(MAX_RECOVERY_INTERVAL_MILLIS);
            setRecoveryBackoff(recovery);
            afterPropertiesSet();
        }

        @Override
        public void destroy() throws Exception {
            try {
                super.destroy();
            }
            finally {
                SubscriptionConnectionFactory.release(subscriptionFactory, connectionFactory);
            }
        }

        @Override
        protected void handleSubscriptionException(CompletableFuture<Void> future, BackOffExecution backOffExecution,
                Throwable cause) {
            lost(cause);
            super.handleSubscriptionException(future, backOffExecution, cause);
            if (!(cause instanceof RedisConnectionFailureException) && !closed) {
                restartLater(this);
            }
        }
    }

    private final class Listener implements MessageListener, SubscriptionListener {

        @Override
        public void onMessage(Message message, byte @Nullable [] pattern) {
            deliver(message.getChannel());
        }

        @Override
        public void onPatternSubscribed(byte[] pattern, long count) {
            restartDelayMillis = MIN_RESTART_DELAY_MILLIS;
            confirmedAgain();
        }
    }
}
