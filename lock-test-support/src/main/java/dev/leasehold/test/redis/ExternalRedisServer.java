package dev.leasehold.test.redis;

import java.net.URI;

import org.junit.jupiter.api.Assumptions;

/** A server given through {@code LEASEHOLD_TEST_REDIS_URL}: shared, so tests may not stop or pause it. */
final class ExternalRedisServer implements TestRedisServer {

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

    private static void abort(String what) {
        Assumptions.abort("cannot " + what + " the shared Redis server given by LEASEHOLD_TEST_REDIS_URL");
    }
}
