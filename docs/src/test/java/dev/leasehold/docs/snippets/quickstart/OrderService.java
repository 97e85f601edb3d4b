package dev.leasehold.docs.snippets.quickstart;

// tag::order-service[]
import dev.leasehold.DistributedLock;

import org.springframework.stereotype.Service;

@Service
class OrderService {

    @DistributedLock(name = "order", key = "#order.id")   // the lock "order:<id>"
    public void ship(Order order) {
        // ...
    }
}
// end::order-service[]

class Order {

    private final long id;

    Order(long id) {
        this.id = id;
    }

    public long getId() {
        return id;
    }
}
