package dev.leasehold;

import java.util.List;
import java.util.Optional;

import dev.leasehold.engine.CurrentLocks;

/**
 * The lock that {@code @DistributedLock} took for the call running now on this thread, so the method can
 * pass its fencing token to the resource without a parameter of its own. Methods returning a
 * {@code Mono} or {@code Flux} find their handle in the Reactor {@code Context} under
 * {@code LockHandle.class} instead (their body does not run on the calling thread).
 */
public final class LockContext {

    private LockContext() {
    }

    /**
     * The innermost lock taken by {@code @DistributedLock} for the call running now on this thread (for a
     * multi-key call, the last key in lock order).
     * @return the handle, or empty when no {@code @DistributedLock} call is running on this thread
     */
    public static Optional<LockHandle> current() {
        return CurrentLocks.innermost();
    }

    /**
     * Every lock the innermost {@code @DistributedLock} call running on this thread took.
     * @return the handles in lock order; empty when no {@code @DistributedLock} call is running on this thread
     */
    public static List<LockHandle> currentLocks() {
        return CurrentLocks.innermostFrame();
    }
}
