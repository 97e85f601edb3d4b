package dev.leasehold.aspect;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.OnLockFailure;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.ReactiveAdapter;

/**
 * Locks around a method that returns a publisher ({@code Mono}, {@code Flux}, or any type Spring's
 * {@code ReactiveAdapterRegistry} adapts), and around a Kotlin {@code suspend} function (whose call Spring
 * AOP turns into a {@code Mono}, or a {@code Flux} for a {@code Flow}). Nothing happens until subscription;
 * each subscription then waits for the lock without holding a thread ({@code tryLockAsync}), calls the
 * method on the thread that got it, and releases when its publisher completes, errors or is cancelled. The
 * handle is in the subscriber's Reactor {@code Context} under {@code LockHandle.class}. Only loaded when
 * Reactor is on the class path.
 */
final class ReactiveLocking {

    private final DistributedLockInterceptor locking;

    ReactiveLocking(DistributedLockInterceptor locking) {
        this.locking = locking;
    }

    Object invoke(MethodInvocation invocation, LockAttribute attribute, List<String> keys) {
        ReactiveAdapter adapter = Objects.requireNonNull(attribute.reactiveAdapter(), "a reactive result has an adapter");
        // the method runs once per subscription, so each needs its own copy of the call
        MethodCall call = invocation instanceof ProxyMethodInvocation proxied
                ? () -> proxied.invocableClone().proceed()
                : invocation::proceed;
        Mono<Locked> acquire = acquire(attribute, keys);
        Function<Locked, Publisher<Object>> body = locked -> locked.acquisition().acquired()
                ? publisher(adapter, call, locked.acquisition())
                : onFailure(adapter, invocation, attribute, locked.acquisition().failure());
        // a single value is passed on as it is (Mono.from would cancel the method's Mono right after its value)
        Publisher<Object> guarded = adapter.isMultiValue()
                ? Flux.usingWhen(acquire, body, this::releaseLater, (locked, error) -> releaseLater(locked),
                        this::releaseLater)
                : Mono.usingWhen(acquire, locked -> Mono.fromDirect(body.apply(locked)), this::releaseLater,
                        (locked, error) -> releaseLater(locked), this::releaseLater);
        return adapter.fromPublisher(guarded);
    }

    /**
     * Waits for the locks without holding a thread ({@code tryLockAsync}); with an application's own
     * {@code LockService} that can only block, on a pooled thread. A subscriber that cancels during the
     * wait does not leave them behind: the cancel stops the wait and releases whatever was granted, before
     * or after it. The subscribing thread re-enters the keys it holds itself; within a transaction open on it,
     * the locks are released once both the publisher ended and the transaction completed.
     */
    private Mono<Locked> acquire(LockAttribute attribute, List<String> keys) {
        return Mono.create(sink -> {
            AtomicBoolean cancelled = new AtomicBoolean();
            AtomicReference<Locked> granted = new AtomicReference<>();
            CompletableFuture<DistributedLockInterceptor.Acquisition> waiting;
            CompletableFuture<Void> transactionEnd;
            try {
                transactionEnd = locking.transactionEnd(attribute);
                waiting = locking.acquireWithoutThread(attribute, keys);
            }
            catch (Throwable ex) {
                sink.error(ex);
                return;
            }
            sink.onCancel(() -> {
                cancelled.set(true);
                if (waiting != null) {
                    waiting.cancel(false);
                }
                releaseIfUnclaimed(granted);
            });
            if (waiting != null) {
                waiting.whenComplete((acquisition, error) -> {
                    if (error != null) {
                        if (cancelled.get()) {
                            return; // the cancel ended the wait: nobody is told
                        }
                        sink.error(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
                    }
                    else {
                        // taken (or re-entered) by the subscribing thread: the lock belongs to the subscription
                        acquisition.handles().forEach(locking::detachFromThread);
                        deliver(sink, cancelled, granted, new Locked(acquisition, transactionEnd));
                    }
                });
                return;
            }
            Schedulers.boundedElastic().schedule(() -> {
                DistributedLockInterceptor.Acquisition acquisition;
                try {
                    acquisition = locking.acquire(attribute, keys);
                }
                catch (Throwable ex) {
                    sink.error(ex);
                    return;
                }
                // taken on a pooled thread that will run other work: the lock belongs to the subscription
                acquisition.handles().forEach(locking::detachFromThread);
                deliver(sink, cancelled, granted, new Locked(acquisition, transactionEnd));
            });
        });
    }

    private void deliver(MonoSink<Locked> sink, AtomicBoolean cancelled, AtomicReference<Locked> granted,
            Locked acquisition) {
        granted.set(acquisition);
        if (cancelled.get()) {
            releaseIfUnclaimed(granted); // the cancel came first, or raced with this grant
            return;
        }
        // a cancel from now on releases it too (closing twice is harmless)
        sink.success(acquisition);
    }

    private void releaseIfUnclaimed(AtomicReference<Locked> granted) {
        Locked locked = granted.getAndSet(null);
        if (locked != null) {
            locking.releaseAsync(locked.acquisition().handles()); // the method never ran: nothing to commit
        }
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> publisher(ReactiveAdapter adapter, MethodCall call,
            DistributedLockInterceptor.Acquisition acquisition) {
        List<LockHandle> handles = acquisition.handles();
        Context lockContext = Context.of(LockHandle.class, handles.get(handles.size() - 1));
        if (!adapter.isMultiValue()) {
            return Mono.defer(() -> {
                Object result;
                try {
                    result = call.call();
                }
                catch (Throwable ex) {
                    return Mono.error(ex);
                }
                return result != null ? Mono.fromDirect((Publisher<Object>) adapter.toPublisher(result)) : Mono.empty();
            }).contextWrite(lockContext);
        }
        return Flux.defer(() -> {
            Object result;
            try {
                result = call.call();
            }
            catch (Throwable ex) {
                return Flux.error(ex);
            }
            return result != null ? (Publisher<Object>) adapter.toPublisher(result) : Flux.empty();
        }).contextWrite(lockContext);
    }

    @SuppressWarnings("unchecked")
    private Publisher<Object> onFailure(ReactiveAdapter adapter, MethodInvocation invocation, LockAttribute attribute,
            @Nullable LockAcquisitionException failure) {
        if (attribute.fallback() != null) {
            return Flux.defer(() -> {
                try {
                    Object result = locking.invokeFallback(invocation, attribute, failure);
                    return result != null ? (Publisher<Object>) adapter.toPublisher(result) : Flux.empty();
                }
                catch (Throwable ex) {
                    return Flux.error(ex);
                }
            });
        }
        if (attribute.onFailure() != OnLockFailure.SKIP) {
            return Flux.error(Objects.requireNonNull(failure, "a failed acquisition has its failure"));
        }
        // a skipped suspend function returns its type's empty value (an empty list, not a null one)
        Object empty = SuspendingFunctions.isSuspending(attribute.method()) ? attribute.skipValue().get() : null;
        return empty != null ? Flux.just(empty) : Flux.empty();
    }

    /** One run of the intercepted method. */
    @FunctionalInterface
    private interface MethodCall {
        @Nullable Object call() throws Throwable;
    }

    /**
     * Never blocks: the thread that ended the publisher may be a non-blocking one. Within a transaction the
     * publisher ends without waiting for the release (its subscriber may be what the transaction waits for).
     */
    private Mono<Void> releaseLater(Locked locked) {
        if (locked.transactionEnd() != null) {
            return Mono.fromRunnable(() -> locking.releaseAfter(locked.transactionEnd(), locked.acquisition().handles()));
        }
        return Mono.fromFuture(() -> locking.releaseAsync(locked.acquisition().handles()));
    }

    /** The locks of one subscription, and the transaction they wait for (null: none). */
    private record Locked(DistributedLockInterceptor.Acquisition acquisition,
            @Nullable CompletableFuture<Void> transactionEnd) {
    }
}
