package dev.leasehold.engine;

import java.nio.charset.StandardCharsets;

import dev.leasehold.engine.server.ServerVersion;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.core.io.ClassPathResource;

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

    @Test
    void theEngineAndTheScriptsAgreeOnShardedPubSubByTheServersOwnNameAndVersion() throws Exception {
        TestRedisServer server = redis.server();
        // what each server has: SSUBSCRIBE/SPUBLISH from Redis 7.0, in every Valkey (whose redis_version is 7.2.4)
        boolean expected = server.serverName().equals("valkey")
                || (server.serverName().equals("redis") && Integer.parseInt(server.serverVersion().split("\\.")[0]) >= 7);
        ServerVersion engine = ServerVersion.parse(server.command("INFO", "server"));
        assertThat(engine).isNotNull();
        assertThat(engine.name()).isEqualTo(server.serverName());
        assertThat(engine.version()).isEqualTo(server.serverVersion());
        assertThat(engine.hasShardedPubSub()).as("%s", engine).isEqualTo(expected);

        String queue = new ClassPathResource("dev/leasehold/engine/redis/queue.lua").getContentAsString(StandardCharsets.UTF_8);
        assertThat(server.command("EVAL", queue + "\nreturn publishCommandFor('sharded')", "0"))
            .as("the scripts on %s", engine).isEqualTo(expected ? "SPUBLISH" : "PUBLISH");
        assertThat(server.command("EVAL", queue + "\nreturn publishCommandFor('')", "0")).isEqualTo("PUBLISH");
    }

    @Test
    void valkeyIsKnownByItsNameNotByTheRedisVersionItReports() {
        ServerVersion valkey = ServerVersion.parse("# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n");
        assertThat(valkey).hasToString("valkey 8.0.1");
        assertThat(valkey.hasShardedPubSub()).isTrue();
        assertThat(ServerVersion.parse("redis_version:6.2.14\r\n")).hasToString("redis 6.2.14")
            .matches(version -> !version.hasShardedPubSub());
        assertThat(ServerVersion.parse("redis_version:7.0.15\r\n")).matches(ServerVersion::hasShardedPubSub);
        assertThat(ServerVersion.parse("redis_version:7.4.1\r\nserver_name:redis\r\n")).hasToString("redis 7.4.1")
            .matches(ServerVersion::hasShardedPubSub);
        // a server of another name that copies Redis's version: not assumed to have what Redis 7 has
        assertThat(ServerVersion.parse("redis_version:7.2.4\r\nserver_name:other\r\n"))
            .matches(version -> !version.hasShardedPubSub());
        assertThat(ServerVersion.parse("# Server\r\n")).isNull();
    }
}
