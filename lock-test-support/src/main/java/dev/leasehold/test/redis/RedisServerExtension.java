package dev.leasehold.test.redis;

import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class its own Redis server:
 * <pre>
 * &#64;RegisterExtension
 * static RedisServerExtension redis = new RedisServerExtension();
 * </pre>
 * The server starts before the first test and stops after the last. Before each test it is resumed
 * and restarted if an earlier test paused or stopped it, and emptied, so tests do not see each other's keys.
 */
public class RedisServerExtension implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

    private final List<String> extraArgs;

    private TestRedisServer server;

    public RedisServerExtension() {
        this(List.of());
    }

    public RedisServerExtension(List<String> extraArgs) {
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** The running server; valid from {@code @BeforeAll} on. */
    public TestRedisServer server() {
        if (server == null) {
            server = TestRedisServers.start(extraArgs);
        }
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (server.controllable()) {
            server.resume();
            server.start();
        }
        server.command("FLUSHALL");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
