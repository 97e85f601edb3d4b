package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;

import org.jspecify.annotations.Nullable;

/** The {@link LockService} with the read/write modes the annotation needs. */
public interface LockEngine extends LockService {

    /**
     * Like {@link #tryLock(String, Duration, Duration)} in the given mode. READ shares the key with other
     * readers; WRITE and EXCLUSIVE exclude everyone.
     */
    Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, @Nullable Duration leaseTime);

    /**
     * Like {@link LockService#tryLockAsync(String, Duration, Duration)} in the given mode: waits without
     * holding a thread, and the lock is bound to no thread.
     */
    java.util.concurrent.CompletionStage<Optional<LockHandle>> tryLockAsync(String key, LockMode mode,
            Duration waitTime, @Nullable Duration leaseTime);

    /**
     * Stops this handle from tying its lock to the calling thread, for a lock that outlives the call that
     * took it (a {@code CompletionStage} or {@code Mono} result): the thread moves on to other work, and a
     * later lock on the same key from it must wait like anyone else's, unless another, still thread-bound
     * handle of the same acquisition is open (an outer call that holds the key). The lock stays held until
     * the handle is closed, from any thread.
     */
    void detachFromThread(LockHandle handle);

    /**
     * Closes the handle like {@link LockHandle#close()} without blocking the calling thread, for code that
     * must not block (an I/O thread completing a result). Completes once the release is done: Redis
     * answered, or {@code leasehold.redis-timeout} passed.
     */
    java.util.concurrent.CompletableFuture<Void> closeAsync(LockHandle handle);

    /**
     * Like {@link #tryLock(String, LockMode, Duration, Duration)}, and the release keeps the key taken until
     * {@code holdAtLeast} has passed since the grant (see {@link LockService#tryLock(String, Duration, Duration, Duration)}).
     */
    default Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, @Nullable Duration leaseTime,
            @Nullable Duration holdAtLeast) {
        if (holdAtLeast == null || holdAtLeast.isZero()) {
            return tryLock(key, mode, waitTime, leaseTime);
        }
        throw new UnsupportedOperationException(getClass().getName() + " does not support holdAtLeast");
    }

    /**
     * For a lock taken asynchronously: keeps its key taken until {@code holdAtLeast} after the grant, even
     * when the handle is closed sooner, as {@link #tryLock(String, LockMode, Duration, Duration, Duration)} does.
     */
    default void holdAtLeast(LockHandle handle, Duration holdAtLeast) {
        throw new UnsupportedOperationException(getClass().getName() + " does not support holdAtLeast");
    }
}
