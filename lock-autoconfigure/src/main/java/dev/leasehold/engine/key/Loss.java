package dev.leasehold.engine.key;

import java.util.List;

/**
 * Whom a loss found by {@link KeyLine#lost} is told to: the lock itself when it was still held (its release has not
 * begun), and the holders that handed the lock on since Redis last confirmed the lease.
 */
public record Loss(boolean reportLock, List<HeldLock> tell) {

    static final Loss NONE = new Loss(false, List.of());

    static final Loss LOCK_ONLY = new Loss(true, List.of());

    static Loss of(boolean reportLock, List<HeldLock> tell) {
        return tell.isEmpty() ? (reportLock ? LOCK_ONLY : NONE) : new Loss(reportLock, tell);
    }

    /** {@link KeyLine#lost} for a lock no line knows of: only the lock itself is told (when it was still held). */
    public static Loss offLine(HeldLock lock) {
        return of(lock.compareAndSetState(HeldLock.State.HELD, HeldLock.State.LOST), List.of());
    }
}
