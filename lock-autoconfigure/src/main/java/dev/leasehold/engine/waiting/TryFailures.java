package dev.leasehold.engine.waiting;

import java.time.Duration;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * The failed tries of one wait (Redis errors, replies that did not come): the error a wait that runs out ends with,
 * the back-off between failing tries (no busy loop), and when a wait without a time limit gives up.
 */
final class TryFailures {

    private static final long MIN_BACKOFF_MILLIS = 50;

    private static final long MAX_BACKOFF_MILLIS = 1000;

    private @Nullable Throwable last;

    /** When the tries began to fail, while {@link #last} is set. */
    private long failingSinceNanos;

    private long backoffMillis = MIN_BACKOFF_MILLIS;

    /** A try answered: failures so far are over. */
    void answered() {
        last = null;
    }

    /** A try sent at {@code sentAtNanos} failed with {@code error} (null: it is not known how; keep the last). */
    void failed(@Nullable Throwable error, long sentAtNanos) {
        if (last == null) {
            failingSinceNanos = sentAtNanos;
        }
        if (error != null) {
            last = error;
        }
    }

    boolean failing() {
        return last != null;
    }

    /** How long to wait before the next try, bounded by the time left (doubling from 50 ms to 1 s). */
    long nextBackoffMillis(long leftNanos) {
        long backoff = Math.min(backoffMillis, Math.max(1, leftNanos / 1_000_000L));
        backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF_MILLIS);
        return backoff;
    }

    /** A wait without a time limit ends once its tries failed for a whole lease, rather than block for ever. */
    boolean failingFor(Duration lease) {
        return last != null && EngineClock.nanoTime() - failingSinceNanos >= lease.toNanos();
    }

    /** The error a wait ends with after failing tries ({@code forALease}: a wait without a time limit gave up). */
    LockAcquisitionException error(String key, boolean forALease, Duration lease) {
        return new LockAcquisitionException(key, "Could not lock '" + key + "': " + LockServerException.describe(last)
                + (forALease ? " (every try for a whole lease, " + lease + ")" : ""), last);
    }
}
