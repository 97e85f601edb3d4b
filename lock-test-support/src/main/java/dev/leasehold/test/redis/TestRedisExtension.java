package dev.leasehold.test.redis;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The JUnit 5 side of {@link TestRedis}: starts the run's shared Redis server before the first test class
 * that asks for it, stops it when the run ends, and resolves {@link TestRedisServer} parameters. The Spring
 * side (the {@code DataRedisConnectionDetails} bean) is registered for test classes annotated with
 * {@code @TestRedis} or {@code @ExtendWith(TestRedisExtension.class)}.
 */
public class TestRedisExtension implements BeforeAllCallback, ParameterResolver {

    @Override
    public void beforeAll(ExtensionContext context) {
        SharedTestRedis.server();
        // closed when the whole run ends (a value of the root store that is AutoCloseable)
        context.getRoot().getStore(ExtensionContext.Namespace.create(TestRedisExtension.class))
            .computeIfAbsent(SharedTestRedis.class, key -> (AutoCloseable) SharedTestRedis::stop, AutoCloseable.class);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestRedisServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return SharedTestRedis.server();
    }

    /** The run's one server, started by whichever comes first: this extension or the Spring test context. */
    static final class SharedTestRedis {

        private static @Nullable TestRedisServer server;

        private SharedTestRedis() {
        }

        static synchronized TestRedisServer server() {
            if (server == null) {
                server = TestRedisServers.start();
                // also when the run ends without the extension's store being closed (a forked JVM killed at exit)
                Runtime.getRuntime().addShutdownHook(new Thread(SharedTestRedis::stop, "leasehold-test-redis-stop"));
            }
            return server;
        }

        static synchronized void stop() {
            if (server != null) {
                server.close();
                server = null;
            }
        }
    }
}
