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

    /**
     * Calls and µs per command since the last {@code CONFIG RESETSTAT} ({@code INFO commandstats}: commands run
     * inside scripts included), without a test's own {@code CONFIG} and {@code INFO}.
     */
    static java.util.Map<String, long[]> commandStats(dev.leasehold.test.redis.TestRedisServer server) {
        java.util.Map<String, long[]> stats = new java.util.LinkedHashMap<>();
        for (String line : server.command("INFO", "commandstats").split("\\R")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String command = line.substring("cmdstat_".length(), line.indexOf(':'));
            if (command.startsWith("config") || command.startsWith("info")) {
                continue;
            }
            stats.put(command, new long[] { statField(line, "calls="), statField(line, "usec=") });
        }
        return stats;
    }

    private static long statField(String line, String name) {
        int start = line.indexOf(name) + name.length();
        int end = start;
        while (end < line.length() && Character.isDigit(line.charAt(end))) {
            end++;
        }
        return Long.parseLong(line.substring(start, end));
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
