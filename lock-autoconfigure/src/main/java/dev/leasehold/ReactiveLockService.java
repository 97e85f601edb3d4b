package dev.leasehold;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * Reactor's view of a {@link LockService}, for WebFlux and other reactive code: nothing happens until
 * subscription, and waiting holds no thread ({@link LockService#tryLockAsync}). Auto-configured as a bean
 * when Reactor is on the class path; {@code new ReactiveLockService(lockService)} works as well.
 * <p>
 * Like Spring's {@code TransactionalOperator}, {@code withLock} wraps a {@code Mono} or a {@code Flux}: each
 * subscription takes the lock, subscribes to the wrapped publisher, and releases when it completes, errors
 * or is cancelled. The handle is in the wrapped publisher's Reactor {@code Context} under
 * {@code LockHandle.class} (for its fencing token). A lock taken here is bound to no thread: it is not
 * re-entrant, and a nested {@code withLock} on the same key waits for the outer one (until its wait runs out).
 */
public final class ReactiveLockService {

    private final LockService locks;

    /**
     * A reactive view of the given service.
     * @param locks the service that takes and releases the locks
     */
    public ReactiveLockService(LockService locks) {
        this.locks = Objects.requireNonNull(locks, "locks");
    }

    /**
     * The handle once granted; empty when the wait ran out; an error ({@link LockAcquisitionException}) when
     * Redis could not be reached. A subscriber that cancels before the grant leaves nothing held. Close
     * the handle when done ({@link LockHandle#closeAsync()}, which never blocks).
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param leaseTime a fixed lease, or null for a lease renewed by the watchdog while held
     * @return a {@code Mono} of the handle, empty when the wait ran out
     */
    public Mono<LockHandle> tryLock(String key, Duration waitTime, @Nullable Duration leaseTime) {
        return Mono.create(sink -> {
            CompletableFuture<Optional<LockHandle>> waiting;
            try {
                waiting = locks.tryLockAsync(key, waitTime, leaseTime).toCompletableFuture();
            }
            catch (RuntimeException ex) {
                sink.error(ex);
                return;
            }
            AtomicBoolean cancelled = new AtomicBoolean();
            AtomicReference<LockHandle> unclaimed = new AtomicReference<>();
            sink.onCancel(() -> {
                cancelled.set(true);
                waiting.cancel(false); // stops the wait, and takes back what it may have been granted
                closeIfUnclaimed(unclaimed);
            });
            waiting.whenComplete((handle, error) -> {
                if (error != null) {
                    sink.error(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
                }
                else if (handle.isEmpty()) {
                    sink.success();
                }
                else {
                    unclaimed.set(handle.get());
                    if (cancelled.get()) {
                        closeIfUnclaimed(unclaimed); // the cancel came at the same moment as the grant
                        return;
                    }
                    sink.success(handle.get()); // a cancel from now on finds it delivered, or closes it
                }
            });
        });
    }

    /**
     * Takes the lock (a watchdog lease) for each subscription to {@code action}, and releases it when the
     * {@code Mono} completes, errors or is cancelled.
     * @param <T> the action's element type
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param action the publisher to run under the lock
     * @return {@code action}'s result; an error ({@link LockAcquisitionException}) when the lock could not be
     * taken within {@code waitTime}, and then {@code action} is not subscribed
     */
    public <T> Mono<T> withLock(String key, Duration waitTime, Mono<T> action) {
        Objects.requireNonNull(action, "action");
        return Mono.usingWhen(lockOrError(key, waitTime), handle -> action.contextWrite(Context.of(LockHandle.class, handle)),
                ReactiveLockService::release, (handle, error) -> release(handle), ReactiveLockService::release);
    }

    /**
     * Like {@link #withLock(String, Duration, Mono)} for a {@code Flux}: held until it terminates or is cancelled.
     * @param <T> the action's element type
     * @param key the logical key
     * @param waitTime how long to wait while another owner holds the key; zero for one try
     * @param action the publisher to run under the lock
     * @return {@code action}'s elements; an error ({@link LockAcquisitionException}) when the lock could not
     * be taken within {@code waitTime}, and then {@code action} is not subscribed
     */
    public <T> Flux<T> withLock(String key, Duration waitTime, Flux<T> action) {
        Objects.requireNonNull(action, "action");
        return Flux.usingWhen(lockOrError(key, waitTime), handle -> action.contextWrite(Context.of(LockHandle.class, handle)),
                ReactiveLockService::release, (handle, error) -> release(handle), ReactiveLockService::release);
    }

    private Mono<LockHandle> lockOrError(String key, Duration waitTime) {
        return tryLock(key, waitTime, null).switchIfEmpty(Mono.error(() -> new LockAcquisitionException(key,
                "Could not lock '" + key + "' within " + waitTime + ": another owner held it")));
    }

    /** Never blocks: the thread that ended the publisher may be a non-blocking one. */
    private static Mono<Void> release(LockHandle handle) {
        return Mono.fromCompletionStage(handle::closeAsync);
    }

    private static void closeIfUnclaimed(AtomicReference<LockHandle> unclaimed) {
        LockHandle handle = unclaimed.getAndSet(null);
        if (handle != null) {
            handle.closeAsync();
        }
    }
}
