package dev.leasehold.aspect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.aspect.DistributedLockInterceptor.Acquisition;
import dev.leasehold.engine.LockEngine;

/**
 * Takes the locks of one call without holding a thread while it waits: every key in order within one
 * wait, each through {@code tryLockAsync}, the next asked for when the previous was granted. The result
 * completes with the locks, or with why the call could not have them (another owner kept a key for the
 * whole wait, Redis did not answer), never on a Redis I/O thread.
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

    private final long deadline;

    private final CompletableFuture<Acquisition> result = new CompletableFuture<>();

    /** Taken so far, in key order; guarded by this. */
    private final List<LockHandle> taken = new ArrayList<>();

    /** The key being waited for now; guarded by this. */
    private CompletableFuture<Optional<LockHandle>> pending;

    private AsyncAcquisition(DistributedLockInterceptor locking, LockEngine engine, LockAttribute attribute,
            List<String> keys, Duration wait) {
        this.locking = locking;
        this.engine = engine;
        this.attribute = attribute;
        this.keys = keys;
        this.wait = wait;
        this.deadline = System.nanoTime() + dev.leasehold.engine.support.DurationLimits.waitNanos(wait);
    }

    static CompletableFuture<Acquisition> start(DistributedLockInterceptor locking, LockEngine engine,
            LockAttribute attribute, List<String> keys, Duration wait) {
        AsyncAcquisition acquisition = new AsyncAcquisition(locking, engine, attribute, keys, wait);
        acquisition.result.whenComplete((value, error) -> {
            if (acquisition.result.isCancelled()) {
                acquisition.stopWaiting();
            }
        });
        acquisition.next();
        return acquisition.result;
    }

    private void next() {
        int index;
        synchronized (this) {
            index = taken.size();
        }
        if (index == keys.size()) {
            List<LockHandle> handles;
            synchronized (this) {
                handles = List.copyOf(taken);
            }
            if (!result.complete(new Acquisition(handles, null))) {
                giveBack(); // cancelled at this moment
            }
            return;
        }
        String key = keys.get(index);
        Duration left = index == 0 ? wait : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        CompletableFuture<Optional<LockHandle>> stage;
        try {
            stage = engine.tryLockAsync(key, attribute.mode(), left, attribute.leaseTime()).toCompletableFuture();
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
        stage.whenComplete((handle, error) -> granted(key, handle, error));
    }

    private void granted(String key, Optional<LockHandle> handle, Throwable error) {
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
        if (handle.isEmpty()) {
            giveBack();
            result.complete(Acquisition.failed(DistributedLockInterceptor.failure(attribute, key, wait, null)));
            return;
        }
        if (attribute.holdAtLeast() != null) {
            engine.holdAtLeast(handle.get(), attribute.holdAtLeast());
        }
        synchronized (this) {
            taken.add(handle.get());
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
            handles = List.copyOf(taken);
            taken.clear();
        }
        locking.releaseAsync(handles);
    }
}
