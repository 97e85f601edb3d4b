package dev.leasehold;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Distributed locks by hand. Keys are logical keys (the {@code leasehold.key-prefix} is added in Redis).
 * Locks are re-entrant per thread: locking a key the thread holds succeeds at once with the same fencing token.
 */
public interface LockService {

    /**
     * Tries to take the lock, waiting up to {@code waitTime}.
     * @param key the logical key
     * @param waitTime how long to wait; about 146 years or more (e.g. {@code ChronoUnit.FOREVER.getDuration()})
     * is no time limit: such a wait ends with the lock, or with {@link LockAcquisitionException} once Redis could
     * not be reached for a whole lease ({@code leasehold.lease-time})
     * @param leaseTime a fixed lease, or {@code null} for a lease renewed by the watchdog while held
     * @return the handle, or empty when another owner held the key for the whole wait
     * @throws LockKeyException when the key is null, blank or too long
     * @throws IllegalArgumentException when a duration is negative (or the lease zero)
     * @throws LockAcquisitionException when Redis could not be reached within the wait plus {@code leasehold.redis-timeout}
     */
    Optional<LockHandle> tryLock(String key, Duration waitTime, @Nullable Duration leaseTime);

    /**
     * Like {@link #tryLock(String, Duration, Duration)}, without holding a thread while it waits: the stage
     * completes with the handle, or empty when the wait ran out; exceptionally with
     * {@link LockAcquisitionException} when Redis could not be reached (same messages as {@code tryLock}) or
     * the application is shutting down. It waits in the same first-come-first-served queue as blocking
     * callers, and completes on the {@code CompletableFuture} default async pool, never on a Redis I/O
     * thread, so dependent stages may block.
     * <p>
     * Cancelling the stage ({@code toCompletableFuture().cancel(..)}) stops the wait and takes back whatever
     * may have been granted meanwhile. The lock belongs to the handle, not to a thread: it is not re-entrant
     * (a later {@code tryLock} or {@code tryLockAsync} on the key, from any thread, waits for it like any
     * other owner's) and may be closed from any thread ({@link LockHandle#closeAsync()} never blocks).
     * Waiting for it on a thread that itself holds the key deadlocks until the wait runs out.
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param leaseTime a fixed lease, or {@code null} for a lease renewed by the watchdog while held
     * @return a stage that completes with the handle, or empty when the wait ran out
     * @throws LockKeyException when the key is null, blank or too long
     * @throws IllegalArgumentException when a duration is negative (or the lease zero)
     */
    default CompletionStage<Optional<LockHandle>> tryLockAsync(String key, Duration waitTime, @Nullable Duration leaseTime) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot lock asynchronously");
    }

    /**
     * Takes the lock with a lease renewed by the watchdog while held.
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @return the handle; close it to release the lock
     * @throws LockAcquisitionException when the wait runs out, or Redis could not be reached
     * @throws LockKeyException when the key is null, blank or too long
     */
    LockHandle lock(String key, Duration waitTime);

    /**
     * Locks, runs the action, and always releases.
     * @param <T> the action's result type
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param action what to run under the lock
     * @return what the action returned
     * @throws LockAcquisitionException when the lock could not be taken; the action is then not run
     */
    <T> T withLock(String key, Duration waitTime, Supplier<T> action);

    /**
     * Locks, runs an action that returns nothing, and always releases.
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param action what to run under the lock
     * @throws LockAcquisitionException when the lock could not be taken; the action is then not run
     */
    default void withLock(String key, Duration waitTime, Runnable action) {
        java.util.Objects.requireNonNull(action, "action");
        try (LockHandle handle = lock(key, waitTime)) {
            action.run();
        }
    }

    /**
     * Whether anyone, anywhere, holds the key now (in any mode).
     * @param key the logical key
     * @return true while any owner holds it
     */
    boolean isLocked(String key);

    /**
     * Like {@link #tryLock(String, Duration, Duration)}, and the key stays taken until {@code holdAtLeast}
     * has passed since the lock was granted, even when the handle is closed sooner: closing then sets the
     * key's TTL to the time left (compare-then-set) instead of deleting it, and nothing renews it after.
     * For a job that must run once per period across instances (ShedLock's {@code lockAtLeastFor}).
     * Closing sooner still ends this JVM's hold ({@link LockHandle#isHeld()} false, no re-entry); only the
     * key in Redis stays.
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param leaseTime a fixed lease, or {@code null} for a lease renewed by the watchdog while held
     * @param holdAtLeast zero or null for none; not longer than a fixed {@code leaseTime}
     * @return the handle, or empty when another owner held the key for the whole wait
     * @throws IllegalArgumentException when {@code holdAtLeast} is negative or longer than the fixed lease
     */
    default Optional<LockHandle> tryLock(String key, Duration waitTime, @Nullable Duration leaseTime, @Nullable Duration holdAtLeast) {
        if (holdAtLeast == null || holdAtLeast.isZero()) {
            return tryLock(key, waitTime, leaseTime);
        }
        throw new UnsupportedOperationException(getClass().getName() + " does not support holdAtLeast");
    }

    /**
     * A {@link Lock} view of the key, for code written against {@code java.util.concurrent.locks}: a
     * watchdog lease while held, re-entrant per thread like every lock here. {@code unlock()} by a thread
     * that does not hold it through this view throws {@link IllegalMonitorStateException}, and after the
     * lock was lost {@link LockLostException} (the hold is given up all the same); {@code newCondition()}
     * throws {@link UnsupportedOperationException} (there are no distributed conditions). {@code lock()}
     * waits as long as others hold the key, in one wait that keeps its place in the queues, but throws
     * {@link LockAcquisitionException} when Redis cannot be reached for a whole lease, rather than block for
     * ever. A thread whose lock was lost and that locks again takes the key anew: when granted, its earlier
     * holds move to the new lock; when not, {@code tryLock} returns false.
     * @param key the logical key
     * @return a view that locks {@code key}
     * @throws LockKeyException when the key is null or blank
     */
    default Lock asLock(String key) {
        return new LeaseholdLock(this, key);
    }
}
