package dev.leasehold;

import java.util.Optional;

import dev.leasehold.engine.CurrentLocks;

/** The lock that {@code @DistributedLock} took for the call running now on this thread. */
public final class LockContext {

    private LockContext() {
    }

    /** The innermost lock taken by {@code @DistributedLock} for the call running now on this thread. */
    public static Optional<LockHandle> current() {
        return CurrentLocks.innermost();
    }
}
