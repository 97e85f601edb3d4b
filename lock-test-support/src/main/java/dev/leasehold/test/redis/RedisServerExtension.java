package dev.leasehold.test.redis;

import java.util.List;

import org.jspecify.annotations.Nullable;
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
 * On the shared server of {@code LEASEHOLD_TEST_REDIS_URL} (which it neither starts nor stops) "emptied" means
 * that the keys written since this JVM first used the server are deleted; keys it had before are kept.
 */
public class RedisServerExtension implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

    private final List<String> extraArgs;

    private @Nullable TestRedisServer server;

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
        TestRedisServer server = server();
        if (server.controllable()) {
            server.resume();
            server.start();
        }
        if (server instanceof ExternalRedisServer shared) {
            shared.deleteKeysOfThisRun(); // never FLUSHALL a shared server: keys it had before the run stay
        }
        else {
            server.command("FLUSHALL");
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
