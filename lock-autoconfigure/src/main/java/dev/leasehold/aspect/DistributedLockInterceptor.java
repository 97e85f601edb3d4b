package dev.leasehold.aspect;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;
import dev.leasehold.OnLockFailure;
import dev.leasehold.engine.CurrentLocks;
import dev.leasehold.engine.LockEngine;
import dev.leasehold.engine.support.DurationLimits;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/**
 * Runs a {@code @DistributedLock} method under its lock: evaluates the keys, takes every lock (all or
 * nothing, in key order, within one wait), runs the method, and releases in reverse order when the call
 * is over. A call is over when the method returns or throws; when the {@code CompletionStage} it returned
 * completes; when the publisher it returned completes, errors or is cancelled; or, for a lock taken while
 * a transaction was already open on the thread, when that transaction completes.
 * <p>
 * The method never runs unlocked unless the annotation asked for it: {@code onFailure = SKIP} does not run
 * it at all, and {@code fallback} runs the named method instead.
 */
public class DistributedLockInterceptor implements MethodInterceptor {

    private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

    private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            DistributedLockInterceptor.class.getClassLoader());

    private final LockAttributeSource attributes;

    private final LockKeyEvaluator keyEvaluator;

    private final Supplier<LockService> lockServiceSupplier;

    private final Supplier<Duration> defaultWaitTime;

    private final Set<Method> warnedAboutOpenTransaction = ConcurrentHashMap.newKeySet();

    private volatile @Nullable LockService lockService;

    private volatile @Nullable ReactiveLocking reactiveLocking;

    private final StageLocking stageLocking = new StageLocking(this);

    /**
     * @param lockService looked up on the first call, so that creating the interceptor (early, with the
     * other advisors) does not create the Redis connection
     * @param defaultWaitTime {@code leasehold.wait-time}, read on every call that has no wait of its own
     */
    DistributedLockInterceptor(LockAttributeSource attributes, LockKeyEvaluator keyEvaluator,
            Supplier<LockService> lockService, Supplier<Duration> defaultWaitTime) {
        this.attributes = attributes;
        this.keyEvaluator = keyEvaluator;
        this.lockServiceSupplier = lockService;
        this.defaultWaitTime = defaultWaitTime;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : null;
        LockAttribute attribute = attributes.getAttribute(invocation.getMethod(), targetClass);
        if (attribute == null) {
            return invocation.proceed();
        }
        List<String> keys = keyEvaluator.keys(attribute, target, targetClass, invocation.getArguments());
        return switch (attribute.resultKind()) {
            case PLAIN -> invokeHoldingUntilReturn(invocation, attribute, keys);
            case COMPLETION_STAGE -> stageLocking.invoke(invocation, attribute, keys);
            case REACTIVE -> reactiveLocking().invoke(invocation, attribute, keys);
        };
    }

    private @Nullable Object invokeHoldingUntilReturn(MethodInvocation invocation, LockAttribute attribute, List<String> keys)
            throws Throwable {
        Acquisition acquisition = acquire(attribute, keys);
        if (!acquisition.acquired()) {
            return notLocked(invocation, attribute, acquisition.failure(), false);
        }
        boolean releasedByTransaction = TRANSACTIONS_PRESENT && TransactionBoundRelease.transactionOpen()
                && deferToTransaction(attribute, acquisition.handles());
        CurrentLocks.push(acquisition.handles());
        try {
            return invocation.proceed();
        }
        finally {
            CurrentLocks.pop();
            if (!releasedByTransaction) {
                release(acquisition.handles());
            }
        }
    }

    /** The lock was not taken: the fallback wins over onFailure; the method itself never runs. */
    @Nullable Object notLocked(MethodInvocation invocation, LockAttribute attribute, @Nullable LockAcquisitionException failure,
            boolean failAsStage) throws Throwable {
        if (attribute.fallback() != null) {
            return invokeFallback(invocation, attribute, failure);
        }
        if (attribute.onFailure() == OnLockFailure.SKIP) {
            return attribute.skipValue().get();
        }
        if (failAsStage) {
            return CompletableFuture.failedFuture(failure);
        }
        throw failure;
    }

    private boolean deferToTransaction(LockAttribute attribute, List<LockHandle> handles) {
        warnOnceAboutOpenTransaction(attribute);
        TransactionBoundRelease.releaseOnCompletion(() -> release(handles));
        return true;
    }

    /**
     * For a call whose result outlives it (a stage, a publisher): when a transaction is open on this thread, a
     * future that completes with it; else null. The call's locks are then released once both its result ended
     * and the transaction completed, whichever is later.
     */
    @Nullable CompletableFuture<Void> transactionEnd(LockAttribute attribute) {
        if (!TRANSACTIONS_PRESENT || !TransactionBoundRelease.transactionOpen()) {
            return null;
        }
        warnOnceAboutOpenTransaction(attribute);
        return TransactionBoundRelease.completion();
    }

    /** Releases without blocking once {@code transactionEnd} completed (at once when null). */
    void releaseAfter(@Nullable CompletableFuture<Void> transactionEnd, List<LockHandle> handles) {
        if (transactionEnd == null) {
            releaseAsync(handles);
        }
        else {
            transactionEnd.whenComplete((ignored, error) -> releaseAsync(handles));
        }
    }

    /**
     * Takes the locks of a call whose result is a publisher, without holding a thread while it waits (see
     * {@link AsyncAcquisition}); null when the application's own {@code LockService} can only block.
     */
    @Nullable CompletableFuture<Acquisition> acquireWithoutThread(LockAttribute attribute, List<String> keys) {
        return lockService() instanceof LockEngine engine
                ? AsyncAcquisition.start(this, engine, attribute, keys, waitTime(attribute), false) : null;
    }

    /** Takes every key in order within the annotation's wait; on failure, gives back what it took. */
    Acquisition acquire(LockAttribute attribute, List<String> keys) {
        return acquire(attribute, keys, waitTime(attribute));
    }

    Duration waitTime(LockAttribute attribute) {
        return attribute.waitTime() != null ? attribute.waitTime() : defaultWaitTime.get();
    }

    /** Takes every key in order within one wait; on failure, gives back what it took. */
    Acquisition acquire(LockAttribute attribute, List<String> keys, Duration wait) {
        long deadline = System.nanoTime() + DurationLimits.waitNanos(wait); // FOREVER does not overflow
        List<LockHandle> handles = new ArrayList<>(keys.size());
        for (String key : keys) {
            Duration left = handles.isEmpty() ? wait : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            Optional<LockHandle> handle;
            try {
                handle = tryKey(attribute, key, left);
            }
            catch (LockAcquisitionException ex) {
                release(handles);
                return Acquisition.failed(failure(attribute, key, wait, ex));
            }
            catch (LockKeyException ex) {
                release(handles);
                throw keyFailure(attribute, ex);
            }
            catch (RuntimeException ex) {
                release(handles);
                throw ex;
            }
            if (handle.isEmpty()) {
                release(handles);
                return Acquisition.failed(failure(attribute, key, wait, null));
            }
            handles.add(handle.get());
        }
        return new Acquisition(handles, null);
    }

    /** One key of a call, on the calling thread, within {@code wait}. */
    Optional<LockHandle> tryKey(LockAttribute attribute, String key, Duration wait) {
        LockService service = lockService();
        return DistributedLockNames.during(attribute.name(), () -> tryLock(service, key, attribute, wait));
    }

    private static Optional<LockHandle> tryLock(LockService service, String key, LockAttribute attribute, Duration wait) {
        if (service instanceof LockEngine engine) {
            return attribute.holdAtLeast() == null ? engine.tryLock(key, attribute.mode(), wait, attribute.leaseTime())
                    : engine.tryLock(key, attribute.mode(), wait, attribute.leaseTime(), attribute.holdAtLeast());
        }
        if (attribute.mode() != LockMode.EXCLUSIVE) {
            throw new IllegalStateException("@DistributedLock on " + attribute.description() + " asks for mode "
                    + attribute.mode() + ", but the application's LockService (" + service.getClass().getName()
                    + ") has only exclusive locks; implement dev.leasehold.engine.LockEngine for read/write locks");
        }
        return attribute.holdAtLeast() == null ? service.tryLock(key, wait, attribute.leaseTime())
                : service.tryLock(key, wait, attribute.leaseTime(), attribute.holdAtLeast());
    }

    static LockKeyException keyFailure(LockAttribute attribute, LockKeyException cause) {
        LockKeyException failure = new LockKeyException("@DistributedLock on " + attribute.description()
                + ": " + cause.getMessage() + "; the method was not run");
        failure.initCause(cause);
        return failure;
    }

    static LockAcquisitionException failure(LockAttribute attribute, String key, Duration wait,
            @Nullable LockAcquisitionException cause) {
        String reason = cause == null ? "another owner held it"
                : cause.getCause() != null ? "Redis did not answer (" + cause.getCause() + ")" : cause.getMessage();
        return new LockAcquisitionException(key, "Could not lock '" + key + "' for " + attribute.description()
                + " within " + wait + ": " + reason, cause != null && cause.getCause() != null ? cause.getCause() : cause);
    }

    /** Releases in reverse lock order. Closing never throws for a lost or unreachable lock; it logs. */
    void release(List<LockHandle> handles) {
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).close();
            }
            catch (RuntimeException ex) {
                logger.warn("Releasing " + handles.get(i) + " failed; it expires after its lease", ex);
            }
        }
    }

    /**
     * Releases without blocking the calling thread, which may be an I/O thread that just completed the
     * result (even the one that would carry the release's own reply).
     */
    CompletableFuture<Void> releaseAsync(List<LockHandle> handles) {
        if (handles.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        if (lockService() instanceof LockEngine engine) {
            CompletableFuture<?>[] releases = new CompletableFuture<?>[handles.size()];
            for (int i = 0; i < releases.length; i++) {
                releases[i] = engine.closeAsync(handles.get(handles.size() - 1 - i));
            }
            return CompletableFuture.allOf(releases);
        }
        // the application's own LockService may block in close()
        return CompletableFuture.runAsync(() -> release(handles));
    }

    void detachFromThread(LockHandle handle) {
        if (lockService() instanceof LockEngine engine) {
            engine.detachFromThread(handle);
        }
    }

    @Nullable Object invokeFallback(MethodInvocation invocation, LockAttribute attribute, @Nullable LockAcquisitionException failure)
            throws Throwable {
        Object[] arguments = invocation.getArguments();
        Method fallback = Objects.requireNonNull(attribute.fallback(), "called only with a fallback");
        if (SuspendingFunctions.isSuspending(attribute.method())) {
            return SuspendingFunctions.invokeFallback(fallback, invocation.getThis(), arguments,
                    attribute.fallbackTakesException() ? failure : null);
        }
        if (attribute.fallbackTakesException()) {
            Object[] withFailure = new Object[arguments.length + 1];
            System.arraycopy(arguments, 0, withFailure, 0, arguments.length);
            withFailure[arguments.length] = failure;
            arguments = withFailure;
        }
        // the fallback runs without this call's lock: it must not see an outer call's as its own
        CurrentLocks.push(List.of());
        try {
            return fallback.invoke(invocation.getThis(), arguments);
        }
        catch (InvocationTargetException ex) {
            throw ex.getTargetException();
        }
        finally {
            CurrentLocks.pop();
        }
    }

    private void warnOnceAboutOpenTransaction(LockAttribute attribute) {
        if (warnedAboutOpenTransaction.add(attribute.method()) && logger.isWarnEnabled()) {
            logger.warn("@DistributedLock on " + attribute.description() + " was called inside a transaction that "
                    + "was already open, so its lock is released when that transaction completes, not when the "
                    + "method returns. The transaction began before the lock was taken and may have read data "
                    + "that the previous holder was still changing; take the lock outside the transaction. "
                    + "(Logged once per method.)");
        }
    }

    LockService lockService() {
        LockService service = lockService;
        if (service == null) {
            service = lockServiceSupplier.get();
            if (service == null) {
                throw new IllegalStateException("@DistributedLock needs a LockService bean, and there is none: "
                        + "configure Redis with spring.data.redis.*, or turn locking off with leasehold.enabled=false");
            }
            lockService = service;
        }
        return service;
    }

    private ReactiveLocking reactiveLocking() {
        ReactiveLocking locking = reactiveLocking;
        if (locking == null) {
            // only created when a method returns a reactive type, so Reactor stays optional
            locking = new ReactiveLocking(this);
            reactiveLocking = locking;
        }
        return locking;
    }

    /** The locks of one call, or why it could not have them. */
    record Acquisition(List<LockHandle> handles, @Nullable LockAcquisitionException failure) {

        static Acquisition failed(LockAcquisitionException failure) {
            return new Acquisition(List.of(), failure);
        }

        boolean acquired() {
            return failure == null;
        }
    }
}
