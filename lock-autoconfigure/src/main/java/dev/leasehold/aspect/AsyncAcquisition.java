package dev.leasehold.aspect;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.aspect.DistributedLockInterceptor.Acquisition;
import dev.leasehold.engine.CurrentLocks;
import dev.leasehold.engine.LockEngine;
import dev.leasehold.engine.waiting.Acquisitions;

import org.jspecify.annotations.Nullable;

/**
 * Takes the locks of one call without holding a thread while it waits: every key in order within one
 * wait, each through {@code tryLockAsync}, the next asked for when the previous was granted. The result
 * completes with the locks, or with why the call could not have them (another owner kept a key for the
 * whole wait, Redis did not answer for the whole wait), never on a Redis I/O thread.
 * <p>
 * The thread that starts the wait (the caller of a {@code CompletionStage} method, the subscriber of a
 * publisher) re-enters the keys it holds itself, at once and without Redis: asked for asynchronously, such
 * a key would wait behind its own holder, which may be waiting for this call. With {@code tryHere}, it also
 * takes the free keys in order, as a plain call would, and the wait goes on from the first busy key (or
 * the first whose try Redis did not answer: it is tried again until the wait ends, as a plain call does).
 * <p>
 * Cancelling the result stops the wait and gives back every lock taken so far, and any granted at that
 * moment: nothing is left held by a caller that went away.
 */
final class AsyncAcquisition {

    private final DistributedLockInterceptor locking;

    private final LockEngine engine;

    private final LockAttribute attribute;

    private final List<String> keys;

    private final Duration wait;

    private final long startedAt = System.nanoTime();

    private final CompletableFuture<Acquisition> result = new CompletableFuture<>();

    /** Taken so far, by key index (null: not yet); guarded by this. */
    private final @Nullable LockHandle[] taken;

    /** The key being waited for now; guarded by this. */
    private @Nullable CompletableFuture<Optional<LockHandle>> pending;

    private AsyncAcquisition(DistributedLockInterceptor locking, LockEngine engine, LockAttribute attribute,
            List<String> keys, Duration wait) {
        this.locking = locking;
        this.engine = engine;
        this.attribute = attribute;
        this.keys = keys;
        this.wait = wait;
        this.taken = new LockHandle[keys.size()];
    }

    /**
     * Starts the wait. When every key is taken on the calling thread, the result is complete on return and its
     * handles are still bound to this thread (a method run here re-enters them); otherwise they are detached.
     * @param tryHere whether the calling thread tries the free keys itself first (it may block for one try)
     * @throws LockKeyException for a key the engine refuses (nothing is left held)
     */
    static CompletableFuture<Acquisition> start(DistributedLockInterceptor locking, LockEngine engine,
            LockAttribute attribute, List<String> keys, Duration wait, boolean tryHere) {
        AsyncAcquisition acquisition = new AsyncAcquisition(locking, engine, attribute, keys, wait);
        acquisition.onCallingThread(tryHere);
        acquisition.result.whenComplete((value, error) -> {
            if (acquisition.result.isCancelled()) {
                acquisition.stopWaiting();
            }
        });
        if (acquisition.firstMissing() == keys.size()) {
            acquisition.result.complete(new Acquisition(acquisition.handles(), null));
            return acquisition.result;
        }
        // the rest may be granted on another thread, and the method run there
        acquisition.handles().forEach(locking::detachFromThread);
        acquisition.next();
        return acquisition.result;
    }

    private void onCallingThread(boolean tryHere) {
        int index = 0;
        if (tryHere) {
            for (; index < keys.size(); index++) {
                Optional<LockHandle> handle;
                try {
                    handle = tryHere(keys.get(index));
                }
                catch (LockAcquisitionException ex) {
                    break; // Redis did not answer in time: the wait below tries again until it ends
                }
                if (handle == null || handle.isEmpty()) {
                    break;
                }
                taken[index] = handle.get();
            }
        }
        // the caller's own keys further on: in key order they would wait behind the caller, maybe for ever
        for (int later = index; later < keys.size(); later++) {
            if (CurrentLocks.holds(keys.get(later))) {
                try {
                    taken[later] = tryHere(keys.get(later)).orElse(null);
                }
                catch (LockAcquisitionException ex) {
                    // it was lost meanwhile: asked for in order below, like any other key
                }
            }
        }
    }

    /** One try on the calling thread (a re-entry needs no Redis); gives back what it took if the key is refused. */
    private Optional<LockHandle> tryHere(String key) {
        try {
            return locking.tryKey(attribute, key, Duration.ZERO);
        }
        catch (LockKeyException ex) {
            giveBack();
            throw DistributedLockInterceptor.keyFailure(attribute, ex);
        }
        catch (LockAcquisitionException ex) {
            throw ex;
        }
        catch (RuntimeException ex) {
            giveBack();
            throw ex;
        }
    }

    private synchronized int firstMissing() {
        for (int i = 0; i < taken.length; i++) {
            if (taken[i] == null) {
                return i;
            }
        }
        return taken.length;
    }

    private synchronized List<LockHandle> handles() {
        return Arrays.stream(taken).filter(Objects::nonNull).toList();
    }

    /** What is left of the wait; an unbounded wait stays unbounded. */
    private Duration left() {
        if (wait.compareTo(Duration.ofNanos(Acquisitions.UNBOUNDED_WAIT_NANOS)) >= 0) {
            return wait;
        }
        return Duration.ofNanos(Math.max(0, wait.toNanos() - (System.nanoTime() - startedAt)));
    }

    private void next() {
        int index = firstMissing();
        if (index == keys.size()) {
            if (!result.complete(new Acquisition(handles(), null))) {
                giveBack(); // cancelled at this moment
            }
            return;
        }
        String key = keys.get(index);
        CompletableFuture<Optional<LockHandle>> stage;
        try {
            stage = engine.tryLockAsync(key, attribute.mode(), left(), attribute.leaseTime()).toCompletableFuture();
        }
        catch (LockKeyException ex) {
            giveBack();
            result.completeExceptionally(DistributedLockInterceptor.keyFailure(attribute, ex));
            return;
        }
        catch (RuntimeException ex) {
            giveBack();
            result.completeExceptionally(ex);
            return;
        }
        synchronized (this) {
            pending = stage;
        }
        if (result.isDone()) {
            stage.cancel(false); // cancelled while this key was being asked for
        }
        stage.whenComplete((handle, error) -> granted(index, handle, error));
    }

    private void granted(int index, @Nullable Optional<LockHandle> handle, @Nullable Throwable error) {
        String key = keys.get(index);
        if (error != null) {
            giveBack();
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof CancellationException) {
                return; // only a cancel of the result cancels the wait: nobody waits for this any more
            }
            if (cause instanceof LockAcquisitionException failure) {
                result.complete(Acquisition.failed(DistributedLockInterceptor.failure(attribute, key, wait, failure)));
            }
            else {
                result.completeExceptionally(cause);
            }
            return;
        }
        if (handle == null || handle.isEmpty()) {
            giveBack();
            result.complete(Acquisition.failed(DistributedLockInterceptor.failure(attribute, key, wait, null)));
            return;
        }
        if (attribute.holdAtLeast() != null) {
            engine.holdAtLeast(handle.get(), attribute.holdAtLeast());
        }
        synchronized (this) {
            taken[index] = handle.get();
        }
        if (result.isDone()) {
            giveBack(); // cancelled while the grant was on its way
            return;
        }
        next();
    }

    private void stopWaiting() {
        CompletableFuture<Optional<LockHandle>> waiting;
        synchronized (this) {
            waiting = pending;
        }
        if (waiting != null) {
            waiting.cancel(false); // the engine takes back a grant that raced with this
        }
        giveBack();
    }

    /** Releases what was taken, without blocking; what is granted later is given back as it arrives. */
    private void giveBack() {
        List<LockHandle> handles;
        synchronized (this) {
            handles = handles();
            Arrays.fill(taken, null);
        }
        locking.releaseAsync(handles);
    }
}
