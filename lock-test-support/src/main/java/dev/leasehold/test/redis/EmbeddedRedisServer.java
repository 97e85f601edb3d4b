package dev.leasehold.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.core.ExecutableProvider;

/** The Redis binary packaged in {@code com.github.codemonstur:embedded-redis}, for machines with neither a binary nor Docker. */
final class EmbeddedRedisServer implements TestRedisServer {

    private static final Logger logger = LoggerFactory.getLogger(EmbeddedRedisServer.class);

    /** The packaged binary, extracted once per JVM (it is deleted when the JVM exits). */
    private static @Nullable String extractedBinary;

    private final int port;

    private redis.embedded.@Nullable RedisServer server;

    EmbeddedRedisServer(int port) {
        this.port = port;
    }

    /**
     * The path of the packaged {@code redis-server} (Redis 6.2) for this OS and architecture, extracted on
     * first use, for {@code LEASEHOLD_TEST_REDIS_BINARY=embedded}.
     */
    static synchronized String binary() {
        if (extractedBinary == null) {
            try {
                extractedBinary = ExecutableProvider.newJarResourceProvider().get().getAbsolutePath();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("could not extract the embedded-redis binary", ex);
            }
            logger.info("Test Redis binary: the one packaged by embedded-redis, {}", extractedBinary);
        }
        return extractedBinary;
    }

    @Override
    public String kind() {
        return "embedded";
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public boolean controllable() {
        return true;
    }

    @Override
    public synchronized void start() {
        try {
            server = redis.embedded.RedisServer.newRedisServer()
                .port(port)
                .bind("127.0.0.1")
                .setting("save \"\"")
                .setting("appendonly no")
                .build();
            server.start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        RespClient.awaitPing(host(), port, Duration.ofSeconds(10));
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            try {
                server.stop();
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            server = null;
        }
    }

    @Override
    public void pause() {
        throw new UnsupportedOperationException("the embedded Redis binary cannot be paused");
    }

    @Override
    public void resume() {
        throw new UnsupportedOperationException("the embedded Redis binary cannot be paused");
    }

    @Override
    public void close() {
        stop();
    }
}
