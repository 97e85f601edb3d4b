package dev.leasehold.testsupport;

import java.time.Duration;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAssert;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.test.redis.TestRedis;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A user's own {@code @SpringBootTest} with {@code @TestRedis} and no {@code spring.data.redis.*} anywhere:
 * the application's Redis, and its locks, are the test's server.
 */
@SpringBootTest(classes = TestRedisBootTest.Application.class, properties = "spring.main.web-application-type=none")
@TestRedis
@Timeout(60)
class TestRedisBootTest {

    @Autowired
    private Environment environment;

    @Autowired
    private LockService locks;

    @Autowired
    private Shipping shipping;

    @Test
    void theApplicationLocksOnTheTestsRedisWithoutAnyRedisProperty(TestRedisServer redis,
            @Autowired DataRedisConnectionDetails connection) {
        assertThat(environment.getProperty("spring.data.redis.host")).isNull();
        assertThat(environment.getProperty("spring.data.redis.port")).isNull();
        assertThat(environment.getProperty("spring.data.redis.url")).isNull();
        assertThat(connection.getStandalone().getPort()).isEqualTo(redis.port());

        try (LockHandle lock = locks.lock("order:1", Duration.ofSeconds(5))) {
            assertThat(redis.command("EXISTS", "lock:{order:1}")).as("the lock is in the test's server").isEqualTo("1");
        }
        assertThat(shipping.ship(2, redis)).as("the annotated method saw its lock in the test's server").isEqualTo("1");
        assertThat(redis.command("EXISTS", "lock:{order:2}")).isEqualTo("0");
    }

    @Nested
    class InANestedClass {

        @Test
        void theSameServerAndTheSameCachedContext(TestRedisServer redis, @Autowired ApplicationContext context,
                @Autowired Shipping nestedShipping) {
            assertThat(nestedShipping).isSameAs(shipping);
            assertThat(context.getBean(DataRedisConnectionDetails.class).getStandalone().getPort()).isEqualTo(redis.port());
            assertThat(nestedShipping.ship(3, redis)).isEqualTo("1");
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {

        @Bean
        Shipping shipping() {
            return new Shipping();
        }
    }

    static class Shipping {

        @DistributedLock(name = "order", key = "#orderId")
        public String ship(long orderId, TestRedisServer redis) {
            LockAssert.assertLocked("order:" + orderId);
            return redis.command("EXISTS", "lock:{order:" + orderId + "}");
        }
    }
}
