package dev.leasehold.aspect;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.OnLockFailure;
import org.aopalliance.intercept.MethodInvocation;
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
        ReactiveAdapter adapter = attribute.reactiveAdapter();
        // the method runs once per subscription, so each needs its own copy of the call
        MethodCall call = invocation instanceof ProxyMethodInvocation proxied
                ? () -> proxied.invocableClone().proceed()
                : invocation::proceed;
        Mono<DistributedLockInterceptor.Acquisition> acquire = acquire(attribute, keys);
        Function<DistributedLockInterceptor.Acquisition, Publisher<Object>> body = acquisition -> acquisition.acquired()
                ? publisher(adapter, call, acquisition) : onFailure(adapter, invocation, attribute, acquisition.failure());
        Publisher<Object> guarded = adapter.isMultiValue()
                ? Flux.usingWhen(acquire, body, this::releaseLater, (acquisition, error) -> releaseLater(acquisition),
                        this::releaseLater)
                : Mono.usingWhen(acquire, acquisition -> Mono.from(body.apply(acquisition)), this::releaseLater,
                        (acquisition, error) -> releaseLater(acquisition), this::releaseLater);
        return adapter.fromPublisher(guarded);
    }

    /**
     * Waits for the locks without holding a thread ({@code tryLockAsync}); with an application's own
     * {@code LockService} that can only block, on a pooled thread. A subscriber that cancels during the
     * wait does not leave them behind: the cancel stops the wait and releases whatever was granted, before
     * or after it.
     */
    private Mono<DistributedLockInterceptor.Acquisition> acquire(LockAttribute attribute, List<String> keys) {
        return Mono.create(sink -> {
            AtomicBoolean cancelled = new AtomicBoolean();
            AtomicReference<DistributedLockInterceptor.Acquisition> granted = new AtomicReference<>();
            CompletableFuture<DistributedLockInterceptor.Acquisition> waiting;
            try {
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
                        deliver(sink, cancelled, granted, acquisition);
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
                deliver(sink, cancelled, granted, acquisition);
            });
        });
    }

    private void deliver(MonoSink<DistributedLockInterceptor.Acquisition> sink, AtomicBoolean cancelled,
            AtomicReference<DistributedLockInterceptor.Acquisition> granted,
            DistributedLockInterceptor.Acquisition acquisition) {
        granted.set(acquisition);
        if (cancelled.get()) {
            releaseIfUnclaimed(granted); // the cancel came first, or raced with this grant
            return;
        }
        // a cancel from now on releases it too (closing twice is harmless)
        sink.success(acquisition);
    }

    private void releaseIfUnclaimed(AtomicReference<DistributedLockInterceptor.Acquisition> granted) {
        DistributedLockInterceptor.Acquisition acquisition = granted.getAndSet(null);
        if (acquisition != null) {
            locking.releaseAsync(acquisition.handles());
        }
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> publisher(ReactiveAdapter adapter, MethodCall call,
            DistributedLockInterceptor.Acquisition acquisition) {
        List<LockHandle> handles = acquisition.handles();
        Context lockContext = Context.of(LockHandle.class, handles.get(handles.size() - 1));
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
            LockAcquisitionException failure) {
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
            return Flux.error(failure);
        }
        // a skipped suspend function returns its type's empty value (an empty list, not a null one)
        Object empty = SuspendingFunctions.isSuspending(attribute.method()) ? attribute.skipValue().get() : null;
        return empty != null ? Flux.just(empty) : Flux.empty();
    }

    /** One run of the intercepted method. */
    @FunctionalInterface
    private interface MethodCall {
        Object call() throws Throwable;
    }

    /** Never blocks: the thread that ended the publisher may be a non-blocking one. */
    private Mono<Void> releaseLater(DistributedLockInterceptor.Acquisition acquisition) {
        return Mono.fromFuture(() -> locking.releaseAsync(acquisition.handles()));
    }
}
