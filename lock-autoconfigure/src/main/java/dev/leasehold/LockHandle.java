package dev.leasehold;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** One acquisition of a lock. Closing it releases the lock (the outermost close, when re-entered). */
public interface LockHandle extends AutoCloseable {

    /**
     * The key of this lock.
     * @return the logical key as given (before {@code leasehold.key-prefix})
     */
    String key();

    /**
     * The fencing token of this grant: pass it to the resource the lock guards, and let the resource refuse
     * a token lower than the highest it has seen.
     * @return greater than 0, strictly increasing per key across every client and restart of the client
     */
    long fencingToken();

    /**
     * Whether this owner still holds the lock, by a conservative local estimate of its lease.
     * @return false once released, or once the lease was lost (expired, taken, Redis said no)
     */
    boolean isHeld();

    /** Releases; idempotent; never deletes a lock that another owner holds now. */
    @Override
    void close();

    /**
     * Compare-then-extend: sets the lease of a lock taken with a fixed {@code leaseTime} to {@code lease}
     * from now, if this owner still holds it (also shorter than what is left: it is set, not added).
     * @param lease the new lease, counted from now
     * @return true when extended; false when the lock was already released or lost (a lost lock is then
     * reported like any other: {@link LockLostEvent}, a WARN, the metrics)
     * @throws IllegalStateException for a watchdog-renewed lock (the watchdog extends it)
     * @throws IllegalArgumentException when {@code lease} is not positive
     * @throws LockAcquisitionException when Redis did not answer within {@code leasehold.redis-timeout}
     * (the lease runs on as before)
     */
    default boolean extend(Duration lease) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot extend its lease");
    }

    /**
     * A conservative local estimate of the lease left (the one {@link #isHeld()} uses): counted from when
     * the last confirmed grant, renewal or extension was sent. Zero once released or lost. For a
     * watchdog-renewed lock, the time left of the current lease period.
     * @return the lease left; zero once released or lost
     */
    default Duration remainingLease() {
        if (!isHeld()) {
            return Duration.ZERO;
        }
        throw new UnsupportedOperationException(getClass().getName() + " cannot estimate its lease");
    }

    /**
     * Whether this lock was found lost, the cases reported as a {@link LockLostEvent}: its lease ran out
     * unrenewed, Redis refused a renewal, or the release found the key gone or another owner's. Checked after
     * {@link #close()}, it tells whether the work ran under the lock to the end.
     * @return true once the lock was found lost
     */
    default boolean wasLost() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot tell whether its lock was lost");
    }

    /**
     * Releases like {@link #close()} without blocking the caller. Completes once the release is done:
     * Redis answered, or {@code leasehold.redis-timeout} passed (a failed release is logged, never an
     * exceptional completion: the lock then expires with its lease).
     * @return a stage that completes once the release is done
     */
    default CompletionStage<Void> closeAsync() {
        return CompletableFuture.runAsync(this::close);
    }
}
