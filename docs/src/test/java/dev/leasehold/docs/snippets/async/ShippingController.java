package dev.leasehold.docs.snippets.async;

import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.ReactiveLockService;
import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class ShippingController {

    private final ReactiveLockService reactiveLocks;

    private final ReactiveShipping shipping;

    ShippingController(ReactiveLockService reactiveLocks, ReactiveShipping shipping) {
        this.reactiveLocks = reactiveLocks;
        this.shipping = shipping;
    }

    // tag::reactive[]
    @PostMapping("/orders/{id}/ship")
    Mono<Shipment> ship(@PathVariable long id) {
        return reactiveLocks.withLock("order:" + id, Duration.ofSeconds(5),
                Mono.deferContextual(context -> shipping.ship(id, context.get(LockHandle.class).fencingToken())));
    }
    // end::reactive[]

    interface ReactiveShipping {

        Mono<Shipment> ship(long id, long fencingToken);
    }
}
