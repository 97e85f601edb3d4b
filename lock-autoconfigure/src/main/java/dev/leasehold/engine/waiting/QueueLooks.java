package dev.leasehold.engine.waiting;

import java.util.concurrent.TimeUnit;

import dev.leasehold.engine.server.LockServer;

/**
 * When a queued exclusive waiter may look with {@link LockServer#lookWhileQueued} (two reads) instead of a try (seven
 * commands) after a sleep, in liveness mode: a try that keeps or takes a place in the queue keeps the entry for the
 * sleep it answers plus the entry timeout; a look writes nothing, so it is sent only while that expiry still covers
 * the sleep after it with a third of the entry timeout to spare (a waiter woken late, its thread descheduled, still
 * finds its entry). With the defaults (refresh 1 s, entry timeout 3 s) a head behind a long hold tries once and then
 * looks twice. Only after a sleep that no release message ended: a message means a grant or a turn, which only a try
 * takes. One per acquisition, used on its steps only (not thread-safe).
 */
final class QueueLooks {

    private final boolean enabled;

    private final long entryNanos;

    /** Until when (engine clock) the last try's queue entry is known to last; 0: none known, the next look is a try. */
    private long coveredUntil;

    /** The sleep the last try answered: the longest a look may put the waiter to sleep for. */
    private long boundMillis;

    QueueLooks(boolean enabled, long entryMillis) {
        this.enabled = enabled;
        this.entryNanos = TimeUnit.MILLISECONDS.toNanos(entryMillis);
    }

    /**
     * A try sent at {@code sentAtNanos} was refused and kept the waiter in the queue: Redis keeps its entry at least
     * {@code sleepMillis} plus the entry timeout from then (it ran after the try was sent).
     */
    void tried(long sentAtNanos, long sleepMillis) {
        if (enabled) {
            coveredUntil = sentAtNanos + TimeUnit.MILLISECONDS.toNanos(sleepMillis) + entryNanos;
            boundMillis = sleepMillis;
        }
    }

    /** Anything else came of a try (not queued, unanswered, granted): the next look is a try. */
    void forget() {
        coveredUntil = 0;
    }

    /** Whether the look at {@code nowNanos} may be a look rather than a try. */
    boolean mayLook(long nowNanos) {
        return coveredUntil != 0
                && nowNanos + TimeUnit.MILLISECONDS.toNanos(boundMillis) + entryNanos / 3 - coveredUntil <= 0;
    }

    long boundMillis() {
        return boundMillis;
    }
}
