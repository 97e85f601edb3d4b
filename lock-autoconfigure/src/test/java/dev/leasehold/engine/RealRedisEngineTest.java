package dev.leasehold.engine;

import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A test class with its own Redis server and a fresh {@link EngineFixture} for every test, on the Lettuce
 * server; {@link EveryServerEngineTest} runs a class on every server kind.
 */
@Timeout(90)
abstract class RealRedisEngineTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    EngineFixture fixture;

    @BeforeEach
    void createFixture() {
        fixture = new EngineFixture(redis.server(), kind());
    }

    EngineFixture.ServerKind kind() {
        return EngineFixture.ServerKind.LETTUCE;
    }

    @AfterEach
    void closeFixture() {
        fixture.close();
    }

    /** Whether Redis has the lock key of this logical key (under the fixture's {@code lock:} prefix). */
    boolean lockKeyExists(String key) {
        return "1".equals(redis.server().command("EXISTS", "lock:{" + key + "}"));
    }

    /** Script calls Redis has run so far (acquires, releases, renewals, token reservations). */
    long scriptCalls() {
        return scriptCalls(redis.server());
    }

    /** Script calls {@code server} has run so far. */
    static long scriptCalls(dev.leasehold.test.redis.TestRedisServer server) {
        long calls = 0;
        for (String line : server.command("INFO", "commandstats").split("\\R")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String value = line.substring(line.indexOf("calls=") + 6);
                calls += Long.parseLong(value.substring(0, value.indexOf(',')));
            }
        }
        return calls;
    }
}
