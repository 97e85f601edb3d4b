package dev.leasehold.engine.waiting;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.engine.server.LockServer;

import org.jspecify.annotations.Nullable;

/**
 * Wakes local waiters when a lock is released anywhere. All waiters of this JVM share one subscription
 * connection; a channel is subscribed while at least one local waiter needs it (reference counted) and
 * a short while after, so a busy key does not subscribe and unsubscribe on every hand-off.
 * <p>
 * A waiter takes {@link Registration#nextRelease()} before it tries the lock, so a release between its
 * failed try and its wait is not missed. When the subscription connection drops, every channel counts as
 * unsubscribed (its waiters are woken to look again and then look at a bounded interval) until a message
 * or a confirmation arrives on it again, which wakes them at once: a release missed meanwhile costs at
 * most that interval, never the holder's whole lease.
 */
final class ReleaseSignals {

    private final LockServer server;

    private final ScheduledExecutorService scheduler;

    private final Duration linger;

    private static final CompletableFuture<Void> CONFIRMED = CompletableFuture.completedFuture(null);

    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

    ReleaseSignals(LockServer server, ScheduledExecutorService scheduler, Duration linger) {
        this.server = server;
        this.scheduler = scheduler;
        this.linger = linger;
        server.onRelease(this::released);
        server.onSubscriptionLost(this::subscriptionLost);
    }

    /**
     * Registers a waiter on a channel, subscribing if it is the first. Never blocks: the waiter waits for
     * {@link Registration#confirmation()} itself, bounded by the Redis timeout and its own deadline (an
     * unconfirmed subscription only means looking again sooner).
     */
    Registration register(String channelName) {
        Channel channel = channels.compute(channelName, (name, existing) -> {
            Channel current = existing != null ? existing : new Channel(name, server.subscribe(name));
            if (current.subscribed.isCompletedExceptionally()) {
                // the last try failed (Redis was down): try again rather than rely on lease expiry for good
                current.subscribed = server.subscribe(name);
            }
            current.users++;
            return current;
        });
        return new Registration(channel);
    }

    /**
     * The next release of a channel this JVM already receives, taken before a try: if that try fails, the
     * waiter can register and sleep at once instead of trying again (a release after the try still wakes
     * it). Null when the channel is not subscribed now.
     */
    @Nullable Pending pending(String channelName) {
        Channel channel = channels.get(channelName);
        if (channel == null) {
            return null;
        }
        if (!isConfirmed(channel.subscribed)) {
            return null;
        }
        return new Pending(channel, Objects.requireNonNull(channel.next.get()));
    }

    /** Whether any channel is subscribed (or being subscribed): when none is, {@link #pending} is null for all. */
    boolean anySubscribed() {
        return !channels.isEmpty();
    }

    /** A release a waiter may sleep on, valid only while its channel stays the one registered. */
    record Pending(Object channel, CompletableFuture<Void> nextRelease) {
    }

    int subscribedChannels() {
        return channels.size();
    }

    private void released(String channelName) {
        Channel channel = channels.get(channelName);
        if (channel != null) {
            if (!isConfirmed(channel.subscribed)) {
                // a message or confirmation on the channel: the server delivers it again
                channel.subscribed = CONFIRMED;
            }
            channel.fire();
        }
    }

    private void subscriptionLost() {
        CompletableFuture<Void> lost = CompletableFuture
            .failedFuture(new IllegalStateException("the subscription connection dropped"));
        channels.values().forEach(channel -> {
            channel.subscribed = lost;
            channel.fire();
        });
    }

    /** Wakes every waiter (shutdown): each looks at the engine's state again. */
    void wakeAll() {
        channels.values().forEach(Channel::fire);
    }

    private static boolean isConfirmed(CompletableFuture<Void> subscribed) {
        return subscribed.isDone() && !subscribed.isCompletedExceptionally();
    }

    private void leave(Channel channel) {
        channels.computeIfPresent(channel.name, (name, current) -> {
            if (current == channel) {
                current.users--;
                if (current.users == 0) {
                    long generation = ++current.idleGeneration;
                    scheduler.schedule(() -> unsubscribeIfIdle(current, generation), linger.toMillis(),
                            TimeUnit.MILLISECONDS);
                }
            }
            return current;
        });
    }

    private void unsubscribeIfIdle(Channel channel, long generation) {
        channels.computeIfPresent(channel.name, (name, current) -> {
            if (current == channel && current.users == 0 && current.idleGeneration == generation) {
                // ordered after the subscribe of any later Channel for this name (same map slot, same server queue)
                server.unsubscribe(name);
                return null;
            }
            return current;
        });
    }

    /** Unsubscribes everything now (shutdown). */
    void close() {
        wakeAll();
        channels.keySet().forEach(server::unsubscribe);
        channels.clear();
    }

    private static final class Channel {

        final String name;

        volatile CompletableFuture<Void> subscribed;

        final AtomicReference<CompletableFuture<Void>> next = new AtomicReference<>(new CompletableFuture<>());

        int users;

        long idleGeneration;

        Channel(String name, CompletableFuture<Void> subscribed) {
            this.name = name;
            this.subscribed = subscribed;
        }

        void fire() {
            next.getAndSet(new CompletableFuture<>()).complete(null);
        }
    }

    /** One waiter's interest in a channel; close it when done waiting. */
    final class Registration implements AutoCloseable {

        private final Channel channel;

        private boolean closed;

        Registration(Channel channel) {
            this.channel = channel;
        }

        /** Whether the server confirmed the subscription (false while it failed, is pending or was lost). */
        boolean subscribed() {
            return isConfirmed(channel.subscribed);
        }

        /** Completes (perhaps exceptionally) once the server confirmed the subscription, or failed to. */
        CompletableFuture<Void> confirmation() {
            return channel.subscribed;
        }

        /** Whether this registration is on the channel {@code pending} was taken from (not a newer one). */
        boolean covers(@Nullable Pending pending) {
            return pending != null && pending.channel() == channel;
        }

        /** Completes at the next release message on the channel. */
        CompletableFuture<Void> nextRelease() {
            return Objects.requireNonNull(channel.next.get());
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                leave(channel);
            }
        }
    }
}
