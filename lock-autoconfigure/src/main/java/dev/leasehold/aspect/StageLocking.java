package dev.leasehold.aspect;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import dev.leasehold.LockHandle;
import dev.leasehold.aspect.DistributedLockInterceptor.Acquisition;
import dev.leasehold.engine.CurrentLocks;
import dev.leasehold.engine.LockEngine;
import org.aopalliance.intercept.MethodInvocation;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;

/**
 * Locks around a method that returns a {@code CompletionStage}: held until the stage completes. The calling
 * thread takes the free keys in order and re-enters its own ({@link AsyncAcquisition}), so a free key runs the
 * method there as a plain call would; a busy key (or one Redis did not answer) is waited for without a thread
 * ({@code tryLockAsync}) for the rest of the wait, the method returning a {@code CompletableFuture} at once
 * and running on the thread that got the lock. Within a transaction open on the calling thread, the locks are
 * released once both the stage and the transaction completed.
 */
final class StageLocking {

    private final DistributedLockInterceptor locking;

    StageLocking(DistributedLockInterceptor locking) {
        this.locking = locking;
    }

    @Nullable Object invoke(MethodInvocation invocation, LockAttribute attribute, List<String> keys) throws Throwable {
        Duration wait = locking.waitTime(attribute);
        CompletableFuture<Void> transactionEnd = locking.transactionEnd(attribute);
        if (wait.isZero() || !(locking.lockService() instanceof LockEngine engine)
                || !attribute.method().getReturnType().isAssignableFrom(CompletableFuture.class)) {
            // one try, or an application's own LockService, or a stage type this cannot return: wait here
            Acquisition acquisition = locking.acquire(attribute, keys, wait);
            if (acquisition.acquired()) {
                return proceedHoldingUntilStageCompletes(invocation, attribute, acquisition.handles(), transactionEnd);
            }
            // the caller handles failures of this call in the stage, so this one goes there too
            return locking.notLocked(invocation, attribute, acquisition.failure(), true);
        }
        CompletableFuture<Acquisition> waiting = AsyncAcquisition.start(locking, engine, attribute, keys, wait, true);
        if (waiting.isDone() && !waiting.isCompletedExceptionally()) {
            // every key taken on the calling thread: the method runs here, as a plain call would
            return proceedHoldingUntilStageCompletes(invocation, attribute, waiting.join().handles(), transactionEnd);
        }
        return proceedWhenLocked(invocation, attribute, waiting, transactionEnd);
    }

    /**
     * Waits for a busy key without holding a thread, then runs the method on the thread that got the lock.
     * Completing the returned future before the grant (a cancel, the caller's {@code orTimeout} or
     * {@code completeExceptionally}) stops the wait and gives back what it took; after it, the method runs on
     * and keeps the lock until its stage completes.
     */
    private CompletableFuture<Object> proceedWhenLocked(MethodInvocation invocation, LockAttribute attribute,
            CompletableFuture<Acquisition> waiting, @Nullable CompletableFuture<Void> transactionEnd) {
        MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;
        CompletableFuture<Object> result = new CompletableFuture<>();
        // once the caller completed the result nobody waits for the lock: a no-op when the wait is over
        result.whenComplete((value, error) -> waiting.cancel(false));
        waiting.whenComplete((acquisition, error) -> {
            if (error != null) {
                result.completeExceptionally(error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error);
                return;
            }
            if (result.isDone()) {
                locking.releaseAsync(acquisition.handles()); // the caller gave up as the lock arrived
                return;
            }
            try {
                Object stage = acquisition.acquired()
                        ? proceedHoldingUntilStageCompletes(call, attribute, acquisition.handles(), transactionEnd)
                        : locking.notLocked(call, attribute, acquisition.failure(), true);
                if (stage == null) {
                    result.complete(null);
                }
                else {
                    ((CompletionStage<?>) stage).whenComplete((value, failure) -> {
                        if (failure != null) {
                            result.completeExceptionally(failure instanceof CompletionException
                                    && failure.getCause() != null ? failure.getCause() : failure);
                        }
                        else {
                            result.complete(value);
                        }
                    });
                }
            }
            catch (Throwable ex) {
                result.completeExceptionally(ex);
            }
        });
        return result;
    }

    private @Nullable Object proceedHoldingUntilStageCompletes(MethodInvocation invocation, LockAttribute attribute,
            List<LockHandle> handles, @Nullable CompletableFuture<Void> transactionEnd) throws Throwable {
        Object result;
        CurrentLocks.push(handles);
        try {
            result = invocation.proceed();
        }
        catch (Throwable ex) {
            releaseNowOrAfter(transactionEnd, handles);
            throw ex;
        }
        finally {
            CurrentLocks.pop();
        }
        if (result == null) {
            releaseNowOrAfter(transactionEnd, handles);
            return null;
        }
        // the stage may complete on any thread, long after this one moved on to other work
        handles.forEach(locking::detachFromThread);
        CompletionStage<?> stage = (CompletionStage<?>) result;
        if (transactionEnd != null) {
            // the caller may wait for the stage inside its transaction: it completes with the method's stage,
            // and the locks go once the transaction completed too
            stage.whenComplete((value, error) -> locking.releaseAfter(transactionEnd, handles));
            return result;
        }
        // the caller sees the stage complete only once the lock is released, and cancelling what it got
        // does not release a lock whose work is still running
        CompletableFuture<Object> released = new CompletableFuture<>();
        stage.whenComplete((value, error) -> locking.releaseAsync(handles).whenComplete((ignored, releaseError) -> {
            if (error != null) {
                released.completeExceptionally(error);
            }
            else {
                released.complete(value);
            }
        }));
        return attribute.method().getReturnType().isInstance(released) ? released : result;
    }

    /** Without a transaction, released before the call returns (as a plain call's); else once it completed. */
    private void releaseNowOrAfter(@Nullable CompletableFuture<Void> transactionEnd, List<LockHandle> handles) {
        if (transactionEnd == null) {
            locking.release(handles);
        }
        else {
            handles.forEach(locking::detachFromThread);
            locking.releaseAfter(transactionEnd, handles);
        }
    }
}
