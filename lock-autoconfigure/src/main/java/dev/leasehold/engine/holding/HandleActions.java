package dev.leasehold.engine.holding;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.engine.key.HeldLock;

/** What a {@link DefaultLockHandle} asks of the engine: giving back a hold, detaching, extending. */
interface HandleActions {

    /**
     * One hold given back; the last releases the lock. Completes once the release is done; never blocks unless
     * {@code blocking} (its caller waits for the release anyway: it may linger for a thread of its turn).
     */
    CompletableFuture<Void> exit(HeldLock lock, boolean blocking);

    /** A handle stopped tying the lock to its thread: the last one ends re-entrancy for that thread. */
    void unbind(HeldLock lock);

    /** Compare-then-extend of a fixed lease (see {@link dev.leasehold.LockHandle#extend}). */
    boolean extend(HeldLock lock, Duration lease);

    /** A handle was garbage collected without close(): said loudly, then released. */
    void orphaned(HeldLock lock);
}
