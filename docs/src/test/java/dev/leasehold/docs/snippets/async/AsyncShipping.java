package dev.leasehold.docs.snippets.async;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.LockService;

class AsyncShipping {

    private final LockService lockService;

    AsyncShipping(LockService lockService) {
        this.lockService = lockService;
    }

    void ship(long id) {
        // tag::try-lock-async[]
        lockService.tryLockAsync("order:" + id, Duration.ofSeconds(5), null)   // null lease = watchdog-renewed
            .thenCompose(handle -> handle
                .map(lock -> shipAsync(id, lock.fencingToken())                  // your CompletableFuture
                    .whenComplete((result, error) -> lock.closeAsync()))      // release without blocking
                .orElseGet(() -> CompletableFuture.failedFuture(new IllegalStateException("order " + id + " is busy"))));
        // end::try-lock-async[]
    }

    CompletableFuture<Shipment> shipAsync(long id, long fencingToken) {
        return CompletableFuture.completedFuture(new Shipment(id, fencingToken));
    }
}
