package dev.leasehold.test.redis;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a {@code @SpringBootTest} (or any Spring test context) a real Redis server, as Spring Boot's
 * service connections do for a Testcontainers container: the context gets a {@code DataRedisConnectionDetails}
 * bean pointing at the server, so the application's Redis, and Leasehold's locks, use it without any
 * {@code spring.data.redis.*} property.
 * <pre>
 * &#64;SpringBootTest
 * &#64;TestRedis
 * class OrderServiceTest {
 *
 *     &#64;Test
 *     void shipsUnderTheLock(&#64;Autowired OrderService orders, TestRedisServer redis) { ... }
 * }
 * </pre>
 * The server is the first of: {@code LEASEHOLD_TEST_REDIS_URL}, a {@code redis-server} binary on the PATH,
 * Testcontainers, the binary packaged in {@code embedded-redis} (see {@link TestRedisServers}). One server
 * serves every test class of the run that asks for it, so Spring's context cache keeps working across
 * classes; it stops when the run ends. Test methods and callbacks may take a {@link TestRedisServer}
 * parameter. Keys are not cleared between tests.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(TestRedisExtension.class)
public @interface TestRedis {
}
