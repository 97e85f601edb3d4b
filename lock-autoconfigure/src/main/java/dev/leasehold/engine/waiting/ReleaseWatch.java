package dev.leasehold.engine.waiting;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * What the head of a key's local queue listens on between its tries: the release messages of one channel
 * (the key's, or with a fair queue this instance's own). Before its first refused try an acquisition only
 * notes the next release of a channel this JVM already receives; after it, it subscribes, and subscribes
 * anew when the subscription lapsed. Used by one acquisition's steps, which run one at a time, so it needs
 * no locking.
 */
final class ReleaseWatch {

    /** How often a waiter looks again while its channel is not (or no longer) confirmed subscribed. */
    static final long UNSUBSCRIBED_RECHECK_MILLIS = 1000;

    private final ReleaseSignals signals;
    private final java.util.function.Supplier<String> channelName;
    private @Nullable String channel;

    private ReleaseSignals.@Nullable Registration registration;
    private ReleaseSignals.@Nullable Pending pendingBeforeTry;
    private @Nullable CompletableFuture<Void> release;

    ReleaseWatch(ReleaseSignals signals, java.util.function.Supplier<String> channelName) {
        this.signals = signals;
        this.channelName = channelName;
    }

    private String channel() {
        if (channel == null) {
            channel = channelName.get();
        }
        return channel;
    }

    /** Taken before each try: the release a refused try then sleeps on (null when nothing is watched yet). */
    void beforeTry() {
        // with nothing subscribed in this JVM no release can be pending: no channel name to make
        pendingBeforeTry = registration == null && signals.anySubscribed() ? signals.pending(channel()) : null;
        release = registration != null ? registration.nextRelease()
                : pendingBeforeTry != null ? pendingBeforeTry.nextRelease() : null;
    }

    /** Whether this acquisition subscribed (after its first refused try). */
    boolean registered() {
        return registration != null;
    }

    /** Registered, but no release message can come now: subscribe again rather than sleep out the holder's lease. */
    boolean lapsed() {
        return registration != null && !registration.subscribed();
    }

    /** Subscribes (again, if registered): completes once the server confirmed the subscription, or failed to. */
    CompletableFuture<Void> subscribe() {
        close();
        registration = signals.register(channel());
        return registration.confirmation();
    }

    /**
     * Whether the subscription is the one the last try's pending release came from, so a release since that
     * try completes {@link #release()}; if not, a release between the try and the subscription went unseen.
     */
    boolean coversLastTry() {
        return Objects.requireNonNull(registration, "subscribed").covers(pendingBeforeTry);
    }

    /** The release a refused try sleeps on. */
    @Nullable CompletableFuture<Void> release() {
        return release;
    }

    /** A sleep until the next release, shortened while the subscription is not confirmed. */
    long sleepNanos(long waitNanos) {
        return registration != null && registration.subscribed() ? waitNanos
                : Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(UNSUBSCRIBED_RECHECK_MILLIS));
    }

    void close() {
        if (registration != null) {
            registration.close();
            registration = null;
        }
    }
}
