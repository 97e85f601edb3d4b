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

import org.springframework.aop.ProxyMethodInvocation;

/**
 * Locks around a method that returns a {@code CompletionStage}: held until the stage completes. The calling
 * thread makes one try, so a free key runs the method there as a plain call would; a busy key is waited
 * for without a thread ({@code tryLockAsync}), the method returning a {@code CompletableFuture} at once
 * and running on the thread that got the lock.
 */
final class StageLocking {

    private final DistributedLockInterceptor locking;

    StageLocking(DistributedLockInterceptor locking) {
        this.locking = locking;
    }

    Object invoke(MethodInvocation invocation, LockAttribute attribute, List<String> keys) throws Throwable {
        Duration wait = locking.waitTime(attribute);
        boolean waitWithoutThread = !wait.isZero() && locking.lockService() instanceof LockEngine
                && attribute.method().getReturnType().isAssignableFrom(CompletableFuture.class);
        // one try on the calling thread: a free key runs the method there, as a plain call would
        Acquisition acquisition = locking.acquire(attribute, keys, waitWithoutThread ? Duration.ZERO : wait);
        if (acquisition.acquired()) {
            return proceedHoldingUntilStageCompletes(invocation, attribute, acquisition.handles());
        }
        if (waitWithoutThread && acquisition.failure().getCause() == null) {
            return proceedWhenLocked(invocation, attribute, keys, wait); // busy: wait without a thread
        }
        // the caller handles failures of this call in the stage, so this one goes there too
        return locking.notLocked(invocation, attribute, acquisition.failure(), true);
    }

    /**
     * Waits for a busy key without holding a thread, then runs the method on the thread that got the lock.
     * Cancelling the returned future before the grant stops the wait; after it, the method runs on and
     * keeps the lock until its stage completes.
     */
    private CompletableFuture<Object> proceedWhenLocked(MethodInvocation invocation, LockAttribute attribute,
            List<String> keys, Duration wait) {
        MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Acquisition> waiting = AsyncAcquisition.start(locking, (LockEngine) locking.lockService(),
                attribute, keys, wait);
        result.whenComplete((value, error) -> {
            if (result.isCancelled()) {
                waiting.cancel(false);
            }
        });
        waiting.whenComplete((acquisition, error) -> {
            if (error != null) {
                result.completeExceptionally(error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error);
                return;
            }
            if (result.isDone()) {
                locking.releaseAsync(acquisition.handles()); // the caller cancelled as the lock arrived
                return;
            }
            try {
                Object stage = acquisition.acquired()
                        ? proceedHoldingUntilStageCompletes(call, attribute, acquisition.handles())
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

    private Object proceedHoldingUntilStageCompletes(MethodInvocation invocation, LockAttribute attribute,
            List<LockHandle> handles) throws Throwable {
        Object result;
        CurrentLocks.push(handles);
        try {
            result = invocation.proceed();
        }
        catch (Throwable ex) {
            locking.release(handles);
            throw ex;
        }
        finally {
            CurrentLocks.pop();
        }
        if (result == null) {
            locking.release(handles);
            return null;
        }
        // the stage may complete on any thread, long after this one moved on to other work
        handles.forEach(locking::detachFromThread);
        CompletionStage<?> stage = (CompletionStage<?>) result;
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
}
