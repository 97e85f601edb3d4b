package dev.leasehold.test.redis;

import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Assumptions;

/**
 * A server given through {@code LEASEHOLD_TEST_REDIS_URL}: shared, so tests may not stop, pause or reconfigure it,
 * and it is never flushed. The keys it holds when this JVM first uses it are recorded; emptying it between tests
 * deletes only keys written since (by this run, or by anyone else meanwhile: point the variable at a server or
 * instance the test run may write to).
 */
final class ExternalRedisServer implements TestRedisServer {

    /** Per URL: the keys the server had before this JVM's tests first used it; never deleted. */
    private static final Map<String, Set<String>> KEYS_BEFORE_THE_RUN = new ConcurrentHashMap<>();

    private final String url;

    private final URI uri;

    ExternalRedisServer(String url) {
        this.url = url;
        this.uri = URI.create(url);
    }

    @Override
    public String kind() {
        return "env";
    }

    @Override
    public String host() {
        return uri.getHost();
    }

    @Override
    public int port() {
        return uri.getPort() > 0 ? uri.getPort() : 6379;
    }

    @Override
    public String url() {
        return url;
    }

    @Override
    public boolean controllable() {
        return false;
    }

    @Override
    public void stop() {
        abort("stop");
    }

    @Override
    public void start() {
        abort("start");
    }

    @Override
    public void pause() {
        abort("pause");
    }

    @Override
    public void resume() {
        abort("resume");
    }

    @Override
    public void close() {
    }

    /**
     * Checks that the server answers (and records its keys, the first time in this JVM); a test that needs the
     * server configured ({@code extraArgs}) is skipped, as one that stops it is.
     */
    void checkAnswers(List<String> extraArgs) {
        if (!extraArgs.isEmpty()) {
            Assumptions.abort("the shared Redis server given by LEASEHOLD_TEST_REDIS_URL cannot be started with "
                    + extraArgs + "; this test needs a server of its own");
        }
        RespClient.awaitPing(host(), port(), Duration.ofSeconds(5));
        KEYS_BEFORE_THE_RUN.computeIfAbsent(url, ignored -> keys());
    }

    /** Deletes the keys written since this JVM first used the server; the ones it had before stay. */
    void deleteKeysOfThisRun() {
        Set<String> before = KEYS_BEFORE_THE_RUN.computeIfAbsent(url, ignored -> keys());
        for (String key : keys()) {
            if (!before.contains(key)) {
                command("UNLINK", key);
            }
        }
    }

    private Set<String> keys() {
        Set<String> keys = new HashSet<>();
        String cursor = "0";
        do {
            List<?> page = (List<?>) Objects.requireNonNull(RespClient.reply(host(), port(), "SCAN", cursor, "COUNT", "1000"),
                    "SCAN's reply");
            cursor = (String) page.get(0);
            for (Object key : (List<?>) page.get(1)) {
                keys.add((String) key);
            }
        }
        while (!"0".equals(cursor));
        return keys;
    }

    private static void abort(String what) {
        Assumptions.abort("cannot " + what + " the shared Redis server given by LEASEHOLD_TEST_REDIS_URL");
    }
}
