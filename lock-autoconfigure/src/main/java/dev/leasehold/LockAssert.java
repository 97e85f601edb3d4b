package dev.leasehold;

import dev.leasehold.engine.CurrentLocks;

import org.jspecify.annotations.Nullable;

/**
 * Lets code check that it runs under its lock, so that a call path that forgot the lock (a call from inside
 * the same bean, which no proxy sees; a new caller) fails at once instead of corrupting data quietly:
 * <pre>
 * void settle(long orderId) {
 *     LockAssert.assertLocked("order:" + orderId);   // throws IllegalStateException when not locked
 *     ...
 * }
 * </pre>
 * The calling thread holds a key when a {@code @DistributedLock} call running on it took it (the innermost
 * call or an outer one), or when it took the lock itself from {@link LockService} ({@code lock},
 * {@code tryLock}, {@code withLock}, {@code asLock}) and has neither closed nor lost it. A lock taken
 * asynchronously ({@code tryLockAsync}, a {@code Mono}, a suspend function) belongs to no thread and does
 * not count; a {@code READ} lock counts.
 * <p>
 * A unit test that calls such code without Redis says so with {@link TestHelper#makeAllAssertsPass(boolean)}.
 */
public final class LockAssert {

    private static final ThreadLocal<Boolean> ALL_PASS = new ThreadLocal<>();

    private LockAssert() {
    }

    /**
     * Passes when the calling thread holds the lock of this logical key (as given to {@code LockService},
     * or {@code name + ":" + key} of {@code @DistributedLock}).
     * @param key the logical key of the lock the code must run under
     * @throws IllegalStateException when it does not
     * @throws LockKeyException when {@code key} is null (no lock has that key; {@link #assertLocked()} checks for
     * any lock)
     */
    public static void assertLocked(@Nullable String key) {
        if (key == null) {
            // a key computed as null is a bug of the caller's: it must not pass because some other lock is held
            throw new LockKeyException("LockAssert.assertLocked(key) was given a null key; no lock has it (to check "
                    + "that the thread holds any lock, call LockAssert.assertLocked())");
        }
        if (!Boolean.TRUE.equals(ALL_PASS.get()) && !CurrentLocks.holds(key)) {
            throw new IllegalStateException("This code must run under the lock '" + key + "', and thread '"
                    + Thread.currentThread().getName() + "' does not hold it (call it through @DistributedLock "
                    + "or LockService; in a unit test without locks, LockAssert.TestHelper.makeAllAssertsPass(true))");
        }
    }

    /**
     * Passes when the calling thread holds any lock.
     * @throws IllegalStateException when it holds none
     */
    public static void assertLocked() {
        if (!Boolean.TRUE.equals(ALL_PASS.get()) && !CurrentLocks.holds(null)) {
            throw new IllegalStateException("This code must run under a lock, and thread '"
                    + Thread.currentThread().getName() + "' holds none (in a unit test without locks, "
                    + "LockAssert.TestHelper.makeAllAssertsPass(true))");
        }
    }

    /** For tests that run lock-asserting code without a lock. */
    public static final class TestHelper {

        private TestHelper() {
        }

        /**
         * Makes every {@code assertLocked} on the calling thread pass ({@code true}), or check again
         * ({@code false}: call it when the test ends, e.g. in {@code @AfterEach}). Per thread, so tests that
         * run in parallel do not see each other's choice; code the test hands to another thread checks there.
         * @param pass whether every assertion on the calling thread passes from now on
         */
        public static void makeAllAssertsPass(boolean pass) {
            if (pass) {
                ALL_PASS.set(Boolean.TRUE);
            }
            else {
                ALL_PASS.remove();
            }
        }
    }
}
