package dev.leasehold.engine.waiting;

import java.util.concurrent.TimeUnit;

import dev.leasehold.engine.server.LockServer;

/**
 * When a queued exclusive waiter may look with {@link LockServer#lookWhileQueued} (four commands, reads only) instead
 * of a try (seven, writes) after a sleep, in liveness mode: a try that keeps or takes a place in the queue keeps the
 * entry for three times the sleep it answers plus the entry timeout; a look writes nothing, so it is sent only while
 * that expiry still covers the sleep after it with a third of the entry timeout to spare (a waiter woken late, its
 * thread descheduled, still finds its entry). With the defaults (refresh 1 s, claim and entry timeouts 3 s) a head
 * behind a long hold tries once and then looks four times; the next in line (4 s sleeps) looks twice. Only after a sleep that no release message ended: a message means a grant or a turn, which only a try
 * takes. One per acquisition, used on its steps only (not thread-safe).
 */
final class QueueLooks {

    /** How many sleeps a try keeps its queue entry for (queue.lua's LOOKS_PER_TRY_PLUS_ONE). */
    static final int SLEEPS_KEPT = 3;

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
     * three times {@code sleepMillis} plus the entry timeout from then (it ran after the try was sent; queue.lua).
     */
    void tried(long sentAtNanos, long sleepMillis) {
        if (enabled) {
            coveredUntil = sentAtNanos + TimeUnit.MILLISECONDS.toNanos(SLEEPS_KEPT * sleepMillis) + entryNanos;
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
