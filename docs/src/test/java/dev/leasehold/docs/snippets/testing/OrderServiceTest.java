package dev.leasehold.docs.snippets.testing;

import dev.leasehold.test.redis.TestRedis;
import dev.leasehold.test.redis.TestRedisServer;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

// tag::test-redis[]
@SpringBootTest
@TestRedis
class OrderServiceTest {

    @Autowired OrderService orders;

    @Test
    void shipsUnderTheLock(TestRedisServer redis) {           // the server, for checks of your own
        orders.ship(42);
        assertThat(redis.command("EXISTS", "lock:{order:42}")).isEqualTo("0");   // released
    }
}
// end::test-redis[]

interface OrderService {

    void ship(long orderId);
}
