package dev.leasehold.docs.snippets.testing;

import java.time.Duration;

import dev.leasehold.test.fault.FaultProxy;
import dev.leasehold.test.redis.TestRedisServer;

class FaultProxyExample {

    void faults(TestRedisServer redis) {
        // tag::fault-proxy[]
        try (FaultProxy proxy = FaultProxy.start(redis.host(), redis.port())) {
            // point spring.data.redis.port (or any client) at proxy.port()
            proxy.latency(Duration.ofMillis(50)); // each direction
            proxy.blackhole();                    // nothing forwarded either way; sockets stay open, calls hang
            proxy.heal();                         // forwards again, first what was sent meanwhile (it runs late)
            proxy.drop();                         // resets (RST) every open connection; new ones are accepted
        }
        // end::fault-proxy[]
    }
}
