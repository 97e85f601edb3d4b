package dev.leasehold.aspect;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;
import dev.leasehold.engine.Await;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The kinds of result a {@code @DistributedLock} method may return, each called the way its users call it,
 * with its outcome as a future: what {@link ResultKindsTest} runs every case with.
 */
enum ResultKind {

    PLAIN {
        @Override
        CompletableFuture<String> call(Calls calls, List<String> keys) {
            try {
                return CompletableFuture.completedFuture(calls.plain(keys));
            }
            catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }

        /** A blocking call is given up on by interrupting its thread (as {@code Future.cancel(true)} does). */
        @Override
        CompletableFuture<String> callGivingUpAfter(Calls calls, List<String> keys, Duration timeout,
                ExecutorService threads, BooleanSupplier waiting) {
            Future<String> call = threads.submit(() -> calls.plain(keys));
            Await.until(Duration.ofSeconds(10), "the call waits", waiting);
            call.cancel(true);
            CompletableFuture<String> outcome = new CompletableFuture<>();
            threads.submit(() -> {
                try {
                    outcome.complete(call.get());
                }
                catch (Exception ex) {
                    outcome.completeExceptionally(ex);
                }
            });
            return outcome;
        }
    },

    COMPLETION_STAGE {
        @Override
        CompletableFuture<String> call(Calls calls, List<String> keys) {
            return calls.stage(keys);
        }

        @Override
        CompletableFuture<String> callGivingUpAfter(Calls calls, List<String> keys, Duration timeout,
                ExecutorService threads, BooleanSupplier waiting) {
            return calls.stage(keys).orTimeout(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    },

    MONO {
        @Override
        CompletableFuture<String> call(Calls calls, List<String> keys) {
            return calls.mono(keys).toFuture();
        }

        @Override
        CompletableFuture<String> callGivingUpAfter(Calls calls, List<String> keys, Duration timeout,
                ExecutorService threads, BooleanSupplier waiting) {
            return calls.mono(keys).timeout(timeout).toFuture();
        }
    },

    FLUX {
        @Override
        CompletableFuture<String> call(Calls calls, List<String> keys) {
            return calls.flux(keys).collectList().map(values -> String.join(",", values)).toFuture();
        }

        @Override
        CompletableFuture<String> callGivingUpAfter(Calls calls, List<String> keys, Duration timeout,
                ExecutorService threads, BooleanSupplier waiting) {
            return calls.flux(keys).timeout(timeout).collectList().map(values -> String.join(",", values)).toFuture();
        }
    };

    /** Calls the method of this kind and subscribes (on the calling thread); "ran" once it ran under its locks. */
    abstract CompletableFuture<String> call(Calls calls, List<String> keys);

    /** Calls it, and the caller gives up after {@code timeout} (its own timeout, not the annotation's wait). */
    abstract CompletableFuture<String> callGivingUpAfter(Calls calls, List<String> keys, Duration timeout,
            ExecutorService threads, BooleanSupplier waiting);

    /** The same annotation on a method of each kind. */
    public static class Calls {

        private final AtomicInteger ran = new AtomicInteger();

        int ran() {
            return ran.get();
        }

        @DistributedLock(name = "kinds", key = "#keys", waitTime = "20s")
        public String plain(List<String> keys) {
            return ranLocked(LockContext.current().isPresent());
        }

        @DistributedLock(name = "kinds", key = "#keys", waitTime = "20s")
        public CompletableFuture<String> stage(List<String> keys) {
            return CompletableFuture.completedFuture(ranLocked(LockContext.current().isPresent()));
        }

        @DistributedLock(name = "kinds", key = "#keys", waitTime = "20s")
        public Mono<String> mono(List<String> keys) {
            return Mono.deferContextual(context -> Mono.just(ranLocked(context.hasKey(LockHandle.class))));
        }

        @DistributedLock(name = "kinds", key = "#keys", waitTime = "20s")
        public Flux<String> flux(List<String> keys) {
            return Flux.deferContextual(context -> Flux.just(ranLocked(context.hasKey(LockHandle.class))));
        }

        private String ranLocked(boolean locked) {
            ran.incrementAndGet();
            return locked ? "ran" : "ran without its lock";
        }
    }
}
