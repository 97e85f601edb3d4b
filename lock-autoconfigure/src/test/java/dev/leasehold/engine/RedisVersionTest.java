package dev.leasehold.engine;

import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The engine tests run twice in the build: on the Redis the machine has, and on the Redis 6.2 binary packaged
 * by embedded-redis (docs/running-the-tests.md), the oldest version the README promises. This test makes
 * the second run prove that it really talked to 6.2: that run sets {@value #EXPECTED_VERSION}.
 */
class RedisVersionTest {

    static final String EXPECTED_VERSION = "leasehold.test.expected-redis-version";

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void theTestsRunOnTheRedisVersionTheBuildAskedFor() {
        String expected = System.getProperty(EXPECTED_VERSION);
        assumeTrue(expected != null && !expected.isBlank(), "no Redis version asked for: any version will do");
        assertThat(redis.server().version()).startsWith(expected.trim() + ".");
    }
}
