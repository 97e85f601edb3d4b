package dev.leasehold;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Distributed locks by hand. Keys are logical keys (the {@code leasehold.key-prefix} is added in Redis).
 * Locks are re-entrant per thread: locking a key the thread holds succeeds at once with the same fencing token.
 */
public interface LockService {

    /**
     * Tries to take the lock, waiting up to {@code waitTime}.
     * @param leaseTime a fixed lease, or {@code null} for a lease renewed by the watchdog while held
     * @return the handle, or empty when another owner held the key for the whole wait
     * @throws LockKeyException when the key is null, blank or too long
     * @throws IllegalArgumentException when a duration is negative (or the lease zero)
     * @throws LockAcquisitionException when Redis could not be reached within the wait plus {@code leasehold.redis-timeout}
     */
    Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime);

    /** Takes the lock with a watchdog lease; throws {@link LockAcquisitionException} when the wait runs out. */
    LockHandle lock(String key, Duration waitTime);

    /** Locks, runs the action, and always releases; returns what the action returned. */
    <T> T withLock(String key, Duration waitTime, Supplier<T> action);

    /** Locks, runs an action that returns nothing, and always releases. */
    default void withLock(String key, Duration waitTime, Runnable action) {
        java.util.Objects.requireNonNull(action, "action");
        try (LockHandle handle = lock(key, waitTime)) {
            action.run();
        }
    }

    /** Whether anyone, anywhere, holds the key now (in any mode). */
    boolean isLocked(String key);
}
