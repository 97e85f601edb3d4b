package dev.leasehold.test.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a Redis server for a test, from the first source that works here:
 * <ol>
 * <li>the URL in the environment variable {@value #URL_VARIABLE} (shared, not controllable);</li>
 * <li>a {@code redis-server} binary on the PATH (or named by {@value #BINARY_VARIABLE}), on a free loopback port;
 * {@value #BINARY_VARIABLE}{@code =}{@value #EMBEDDED_BINARY} names the Redis 6.2 binary packaged by
 * {@code embedded-redis}, run like any other binary (so pausing, Sentinel and Cluster work on it too), and
 * {@value #BINARY_VARIABLE}{@code =}{@value #VALKEY_BINARY} a Valkey server: {@value #VALKEY_VARIABLE}, else
 * {@code valkey-server} on the PATH;</li>
 * <li>Testcontainers ({@code redis:7-alpine}) when a Docker engine is reachable;</li>
 * <li>the binary packaged by {@code embedded-redis}.</li>
 * </ol>
 * It logs which one it used.
 */
public final class TestRedisServers {

    public static final String URL_VARIABLE = "LEASEHOLD_TEST_REDIS_URL";

    public static final String BINARY_VARIABLE = "LEASEHOLD_TEST_REDIS_BINARY";

    /** The value of {@value #BINARY_VARIABLE} that picks the binary packaged by {@code embedded-redis}. */
    public static final String EMBEDDED_BINARY = "embedded";

    /** The value of {@value #BINARY_VARIABLE} that picks a Valkey server ({@link #findValkeyBinary()}). */
    public static final String VALKEY_BINARY = "valkey";

    /** A {@code valkey-server} binary, when it is not the one on the PATH. */
    public static final String VALKEY_VARIABLE = "LEASEHOLD_TEST_VALKEY_BINARY";

    private static final Logger logger = LoggerFactory.getLogger(TestRedisServers.class);

    private TestRedisServers() {
    }

    /** A running server with no extra configuration. */
    public static TestRedisServer start() {
        return start(List.of());
    }

    /**
     * A running server; {@code extraArgs} are passed to {@code redis-server} (for example
     * {@code --cluster-enabled yes}); the shared environment server cannot take them, so a test that asks for
     * any is skipped there.
     */
    public static TestRedisServer start(List<String> extraArgs) {
        TestRedisServer server = create(extraArgs);
        if (server instanceof ExternalRedisServer shared) {
            // runs already, and tests may not restart it: only checked (a test that stops it is skipped then)
            shared.checkAnswers(extraArgs);
        }
        else {
            server.start();
        }
        logStarted(server);
        return server;
    }

    /**
     * A running server of this test's own, never the shared {@code LEASEHOLD_TEST_REDIS_URL} one (tests that
     * need several independent servers); {@code environment} is added to the {@code redis-server} process.
     * @throws IllegalStateException when an environment is given but no {@code redis-server} binary is found
     */
    public static TestRedisServer startOwn(List<String> extraArgs, java.util.Map<String, String> environment) {
        String binary = findBinary();
        TestRedisServer server;
        if (binary != null) {
            server = new LocalRedisServer(binary, freePort(), extraArgs).withEnvironment(environment);
        }
        else if (!environment.isEmpty()) {
            throw new IllegalStateException("This test needs a redis-server binary on the PATH (or "
                    + BINARY_VARIABLE + ") to run it with " + environment.keySet()
                    + "; on Debian: apt-get install redis-server");
        }
        else {
            server = new EmbeddedRedisServer(freePort());
        }
        server.start();
        logStarted(server);
        return server;
    }

    private static void logStarted(TestRedisServer server) {
        String nameAndVersion = "";
        try {
            // the server's own name and version: Valkey reports redis_version 7.2.4 whatever its version
            nameAndVersion = ", " + server.serverName() + " " + server.serverVersion();
        }
        catch (RuntimeException ex) {
            // a shared server may refuse INFO to this user: the test does not need it
        }
        logger.info("Test Redis: {} at {}{}", server.kind(), server.url(), nameAndVersion);
    }

    /** Whether {@value #URL_VARIABLE} names a shared server (set and not blank). */
    static boolean sharedServerConfigured() {
        String url = System.getenv(URL_VARIABLE);
        return url != null && !url.isBlank();
    }

    private static TestRedisServer create(List<String> extraArgs) {
        if (sharedServerConfigured()) {
            return new ExternalRedisServer(System.getenv(URL_VARIABLE).trim());
        }
        String binary = findBinary();
        if (binary != null) {
            return new LocalRedisServer(binary, freePort(), extraArgs);
        }
        if (ContainerRedisServer.dockerAvailable()) {
            return new ContainerRedisServer(freePort(), extraArgs);
        }
        logger.info("Test Redis: no redis-server on the PATH and no Docker engine; using the embedded binary");
        return new EmbeddedRedisServer(freePort());
    }

    static @Nullable String findBinary() {
        String configured = System.getenv(BINARY_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            return switch (configured.trim()) {
                case EMBEDDED_BINARY -> EmbeddedRedisServer.binary();
                case VALKEY_BINARY -> requiredValkeyBinary();
                default -> configured.trim();
            };
        }
        return onPath("redis-server");
    }

    /**
     * The Valkey server binary: {@value #VALKEY_VARIABLE} when set, else {@code valkey-server} on the PATH; null
     * when there is none.
     */
    public static @Nullable String findValkeyBinary() {
        String configured = System.getenv(VALKEY_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            return configured.trim();
        }
        return onPath("valkey-server");
    }

    private static String requiredValkeyBinary() {
        String binary = findValkeyBinary();
        if (binary == null) {
            // asked for by name: running the tests on Redis instead would pass for a Valkey run
            throw new IllegalStateException(BINARY_VARIABLE + "=" + VALKEY_BINARY + " but there is no valkey-server on "
                    + "the PATH and " + VALKEY_VARIABLE + " is not set; on Debian 12: apt-get install -t "
                    + "bookworm-backports valkey-server (.ci/run does it)");
        }
        return binary;
    }

    private static @Nullable String onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File candidate = new File(dir, name);
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate.getAbsolutePath();
            }
        }
        return null;
    }

    /** A loopback port nobody listens on now. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
