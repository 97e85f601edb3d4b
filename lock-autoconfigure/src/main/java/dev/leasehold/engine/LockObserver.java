package dev.leasehold.engine;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;

/**
 * Told what the engine does, for events, metrics and logs. Every method has a no-op default; the
 * engine calls them on the thread doing the work (lost locks on the watchdog thread), so they must be
 * quick and must not throw (what they throw is logged and ignored).
 */
public interface LockObserver {

    /** A lock was granted after waiting {@code waitedNanos} (re-entries are not reported). */
    default void acquired(String key, LockMode mode, long waitedNanos) {
    }

    /**
     * A lock was not granted within the wait: {@code error} is null when other owners held the key the
     * whole time, else what Redis did wrong.
     */
    default void notAcquired(String key, LockMode mode, long waitedNanos, Throwable error) {
    }

    /** A lock was released after being held {@code heldNanos}. */
    default void released(String key, LockMode mode, long heldNanos) {
    }

    /** A held lock's lease was lost: from now on another owner may hold the key. */
    default void lost(LockHandle handle, String reason) {
    }

    /** A watchdog round could not confirm the renewal of {@code locks} locks (they are retried until their lease ends). */
    default void renewalFailed(int locks) {
    }

    /**
     * A watchdog round got Redis's answer to every one of the {@code locks} renewals it sent (the health
     * indicator learns from this that renewals work; a refused renewal is reported through {@link #lost}).
     */
    default void renewed(int locks) {
    }
}
