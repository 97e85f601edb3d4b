package dev.leasehold.engine;

import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The engine tests run up to three times in the build: on the Redis the machine has, on the Redis 6.2 binary
 * packaged by embedded-redis (docs/running-the-tests.md), the oldest version the README promises, and on Valkey 8.
 * This test makes the second and third runs prove that they really talked to that server: they set
 * {@value #EXPECTED_VERSION} or {@value #EXPECTED_SERVER}.
 */
class RedisVersionTest {

    static final String EXPECTED_VERSION = "leasehold.test.expected-redis-version";

    static final String EXPECTED_SERVER = "leasehold.test.expected-server";

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void theTestsRunOnTheRedisVersionTheBuildAskedFor() {
        String expected = System.getProperty(EXPECTED_VERSION);
        assumeTrue(expected != null && !expected.isBlank(), "no Redis version asked for: any version will do");
        assertThat(redis.server().version()).startsWith(expected.trim() + ".");
    }

    @Test
    void theTestsRunOnTheServerTheBuildAskedFor() {
        String expected = System.getProperty(EXPECTED_SERVER);
        assumeTrue(expected != null && !expected.isBlank(), "no server asked for: any will do");
        assertThat(redis.server().serverName()).isEqualTo(expected.trim());
        if (expected.trim().equals("valkey")) {
            // Valkey names the Redis version it is compatible with in redis_version, its own in valkey_version
            assertThat(redis.server().serverVersion()).startsWith("8.");
        }
    }
}
