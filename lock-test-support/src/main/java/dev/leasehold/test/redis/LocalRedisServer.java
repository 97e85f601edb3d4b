package dev.leasehold.test.redis;

import org.jspecify.annotations.Nullable;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@code redis-server} process of our own on a free loopback port, without persistence. */
final class LocalRedisServer implements TestRedisServer {

    private static final String HOST = "127.0.0.1";

    private final String binary;

    private final int port;

    private final List<String> extraArgs;

    private final Path workDir;

    /** Config lines for a Sentinel, or null for a plain server. */
    private final @Nullable List<String> sentinelConfig;

    private @Nullable Process process;

    /** Environment variables added to the process (e.g. a preloaded libfaketime). */
    private java.util.Map<String, String> environment = java.util.Map.of();

    LocalRedisServer(String binary, int port, List<String> extraArgs) {
        this(binary, port, extraArgs, null);
    }

    LocalRedisServer withEnvironment(java.util.Map<String, String> environment) {
        this.environment = java.util.Map.copyOf(environment);
        return this;
    }

    private LocalRedisServer(String binary, int port, List<String> extraArgs, @Nullable List<String> sentinelConfig) {
        this.binary = binary;
        this.port = port;
        this.extraArgs = List.copyOf(extraArgs);
        this.sentinelConfig = sentinelConfig;
        try {
            this.workDir = Files.createTempDirectory("leasehold-redis-" + port + "-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A Redis Sentinel; it rewrites its config file, so it gets one of its own. */
    static LocalRedisServer sentinel(String binary, int port, List<String> configLines) {
        return new LocalRedisServer(binary, port, List.of(), List.copyOf(configLines));
    }

    @Override
    public String kind() {
        String server = new File(binary).getName().startsWith("valkey") ? "valkey" : "redis";
        return server + (sentinelConfig != null ? "-sentinel" : "-server");
    }

    @Override
    public String host() {
        return HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String url() {
        return "redis://" + HOST + ":" + port;
    }

    @Override
    public boolean controllable() {
        return true;
    }

    @Override
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            return;
        }
        List<String> command = new ArrayList<>();
        if (sentinelConfig != null) {
            Path config = workDir.resolve("sentinel.conf");
            try {
                if (!Files.exists(config)) {
                    Files.write(config, sentinelConfig);
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            command.addAll(List.of(binary, config.toString(), "--sentinel", "--port", String.valueOf(port),
                    "--bind", HOST, "--dir", workDir.toString(), "--protected-mode", "no"));
        }
        else {
            command.addAll(List.of(binary, "--port", String.valueOf(port), "--bind", HOST, "--save", "",
                    "--appendonly", "no", "--dir", workDir.toString(), "--daemonize", "no", "--protected-mode", "no"));
        }
        command.addAll(extraArgs);
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().putAll(environment);
            process = builder.directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(new File(workDir.toFile(), "redis.log"))
                .start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("could not start " + binary, ex);
        }
        RespClient.awaitPing(HOST, port, Duration.ofSeconds(10));
    }

    @Override
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        resume();
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("redis-server " + process.pid() + " did not stop");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        process = null;
    }

    @Override
    public synchronized void pause() {
        signal("-STOP");
    }

    @Override
    public synchronized void resume() {
        signal("-CONT");
    }

    private void signal(String signal) {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).inheritIO().start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + signal + " " + process.pid() + " failed");
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        stop();
        try (var files = Files.walk(workDir)) {
            files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> path.toFile().delete());
        }
        catch (IOException ex) {
            // a temp folder left behind is harmless
        }
    }

    @Override
    public String toString() {
        return "redis-server on " + url();
    }
}
