package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What both ways of receiving release messages do alike: hand each message (and each confirmation of a
 * (re)subscription, since a release may have been missed before it) to the engine's listener, tell the engine when
 * the subscription was lost, and say once, loudly, when Redis refuses to subscribe.
 */
abstract class ReleaseChannels {

    private static final Log logger = LogFactory.getLog(ReleaseChannels.class);

    private final AtomicBoolean refusalLogged = new AtomicBoolean();

    private volatile Consumer<String> releaseListener = channel -> {
    };

    private volatile Runnable lostListener = () -> {
    };

    final void onRelease(Consumer<String> listener) {
        this.releaseListener = listener;
    }

    final void onLost(Runnable listener) {
        this.lostListener = listener;
    }

    /** A release (or a confirmed subscription) on {@code channel}: the waiters on it look again. */
    final void deliver(byte[] channel) {
        try {
            releaseListener.accept(new String(channel, StandardCharsets.UTF_8));
        }
        catch (RuntimeException ex) {
            logger.error("Release listener failed", ex);
        }
    }

    /** Until a channel is confirmed again, its release messages may be lost: the waiters look again meanwhile. */
    final void lost() {
        logger.debug("The release subscription dropped; waiters look again until it is back");
        try {
            lostListener.run();
        }
        catch (RuntimeException ex) {
            logger.error("Subscription-lost listener failed", ex);
        }
    }

    /** Redis refused a subscription (an ACL without channel rights): said once, with the rule to add. */
    final void refused(String what, String reason, String channelPattern) {
        if (refusalLogged.compareAndSet(false, true)) {
            logger.warn("Redis refused " + what + " (" + reason + "). Waiters cannot be woken by releases and look "
                    + "again every second instead. Grant the Redis user the lock channels, e.g. ACL SETUSER <user> &"
                    + channelPattern + " (logged once)");
        }
    }
}
