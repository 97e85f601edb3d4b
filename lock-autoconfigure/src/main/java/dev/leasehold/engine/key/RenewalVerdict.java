package dev.leasehold.engine.key;

import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * What a renewal's answer means ({@link KeyLine#renewalAnswered}): settled (confirmed, or nothing to do), to be
 * retried (no answer yet, the lease not over), or a loss: {@code lose} is to stop being renewed and be lost for
 * {@code reason} (the lock of the hand-off chain that has the lease now, which may be a later one than the lock sent).
 */
public record RenewalVerdict(boolean settled, @Nullable HeldLock lose, @Nullable String reason) {

    static final RenewalVerdict SETTLED = new RenewalVerdict(true, null, null);

    /** Settled: Redis confirmed the lease. */
    static final RenewalVerdict CONFIRMED = new RenewalVerdict(true, null, null);

    static final RenewalVerdict RETRY = new RenewalVerdict(false, null, null);

    static RenewalVerdict lose(HeldLock lock, String reason) {
        return new RenewalVerdict(true, lock, reason);
    }

    /**
     * The verdict for {@code lock}, the lock of the hand-off chain that has the lease of {@code sent} now (the
     * renewal was sent at {@code sentAtNanos}; {@code renewed} null: no answer yet, or an error). Confirms the lease
     * estimate of a held lock; the line confirms its unconfirmed holders.
     */
    static RenewalVerdict of(HeldLock lock, HeldLock sent, @Nullable Boolean renewed, long sentAtNanos) {
        if (Boolean.FALSE.equals(renewed)) {
            // the key is not this owner token's in Redis: lost under whoever of this JVM has it, even a holder whose
            // release has not passed the key on yet (it may linger for a thread of its turn)
            return lose(lock, "Redis refused the renewal: the key expired or is owned by someone else");
        }
        if (lock.state() != HeldLock.State.HELD || (lock == sent && !lock.watched())) {
            return SETTLED;
        }
        if (Boolean.TRUE.equals(renewed)) {
            lock.confirmedAt(sentAtNanos);
            return CONFIRMED;
        }
        if (EngineClock.nanoTime() - lock.leaseEndsAtNanos() >= 0) {
            return lose(lock, "renewal failed until the lease of " + lock.leaseMillis + " ms ran out");
        }
        return RETRY;
    }

    /** {@link KeyLine#renewalAnswered} for a lock no line knows of. */
    public static RenewalVerdict offLine(HeldLock sent, @Nullable Boolean renewed, long sentAtNanos) {
        return of(sent, sent, renewed, sentAtNanos);
    }
}
