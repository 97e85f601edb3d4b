package dev.leasehold.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;

/** The Redis binary packaged in {@code com.github.codemonstur:embedded-redis}, for machines with neither a binary nor Docker. */
final class EmbeddedRedisServer implements TestRedisServer {

    private final int port;

    private redis.embedded.RedisServer server;

    EmbeddedRedisServer(int port) {
        this.port = port;
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
