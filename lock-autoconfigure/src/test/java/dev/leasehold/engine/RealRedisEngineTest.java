package dev.leasehold.engine;

import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A test class with its own Redis server and a fresh {@link EngineFixture} for every test. */
@Timeout(90)
abstract class RealRedisEngineTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    EngineFixture fixture;

    @BeforeEach
    void createFixture() {
        fixture = new EngineFixture(redis.server());
    }

    @AfterEach
    void closeFixture() {
        fixture.close();
    }
}
