package dev.leasehold.engine.waiting;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.server.LockServerException;

import org.jspecify.annotations.Nullable;

/**
 * What {@code tryLockAsync} returns for an {@link Acquisition}: a stage its caller may cancel (the wait then
 * ends and takes back whatever may have been granted), completed on the engine's delivery threads
 * ({@link Deliveries}) rather than on the thread that ended the wait (a Redis I/O thread, or the engine's wait
 * thread), so that dependent stages may block without stalling Redis replies or other waiters.
 * <p>
 * A handle that arrives after its stage was cancelled (or completed by someone else) has no taker, and is
 * closed at once.
 */
final class AsyncOutcome {

    private AsyncOutcome() {
    }

    /**
     * @param register makes the handle of a granted lock
     * @param delivered told once the caller has the handle (a loss found before then is reported now)
     * @param deliveries where the stage completes
     */
    static CompletableFuture<Optional<LockHandle>> of(Acquisition acquisition,
            Function<HeldLock, LockHandle> register, java.util.function.Consumer<HeldLock> delivered, Executor deliveries) {
        CompletableFuture<Optional<LockHandle>> outcome = new CompletableFuture<>();
        // cancelled, or completed by its holder (orTimeout, complete): stop waiting (a no-op once it ended)
        outcome.whenComplete((value, error) -> acquisition.cancel());
        acquisition.result().whenComplete((lock, error) -> {
            if (error != null) {
                deliver(deliveries, () -> outcome.completeExceptionally(rethrown(error)));
                return;
            }
            if (lock == null) {
                deliver(deliveries, () -> outcome.complete(Optional.empty()));
                return;
            }
            LockHandle handle;
            try {
                handle = register.apply(lock);
            }
            catch (RuntimeException ex) { // granted as shutdown began: released already
                deliver(deliveries, () -> outcome.completeExceptionally(ex));
                return;
            }
            deliver(deliveries, () -> {
                if (outcome.complete(Optional.of(handle))) {
                    delivered.accept(lock);
                }
                else {
                    handle.closeAsync(); // nobody takes it: never reported lost either
                }
            });
        });
        return outcome;
    }

    private static void deliver(Executor deliveries, Runnable completion) {
        try {
            deliveries.execute(completion);
        }
        catch (RejectedExecutionException ex) {
            completion.run();
        }
    }

    /** The outcome of an acquisition that has ended. */
    static HeldLock now(CompletableFuture<HeldLock> result) {
        try {
            return result.join();
        }
        catch (CompletionException ex) {
            throw rethrown(ex.getCause());
        }
    }

    /** A failure made on the thread that ended the wait, anew for the thread that sees it (its stack trace). */
    static RuntimeException rethrown(@Nullable Throwable error) {
        Throwable cause = LockServerException.unwrap(error);
        if (cause instanceof LockAcquisitionException failure) {
            return new LockAcquisitionException(failure.getKey(), failure.getMessage(), failure.getCause());
        }
        return cause instanceof RuntimeException runtime ? runtime : new IllegalStateException(cause);
    }
}
