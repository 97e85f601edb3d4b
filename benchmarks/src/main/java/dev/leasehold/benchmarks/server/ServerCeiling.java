package dev.leasehold.benchmarks.server;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * The server's own ceiling for the commands a lock needs, from {@code redis-benchmark} on the same server:
 * requests per second for {@code SET NX PX}, the compare-and-delete {@code EVALSHA} and {@code PING}, with one
 * client (sequential, like one thread) and with 16.
 */
public final class ServerCeiling {

    private static final Pattern REQUESTS_PER_SECOND = Pattern.compile("([0-9.]+) requests per second");

    private final String binary;

    private final TestRedisServer redis;

    private final String compareAndDeleteSha;

    public ServerCeiling(TestRedisServer redis) {
        this.redis = redis;
        this.binary = findBinary();
        this.compareAndDeleteSha = redis.command("SCRIPT", "LOAD", FloorContender.COMPARE_AND_DELETE);
    }

    public boolean available() {
        return binary != null;
    }

    /** A command that redis-benchmark runs, and how it is shown in the report. */
    public record Probe(String label, List<String> args) {
    }

    public List<Probe> probes() {
        return List.of(
                new Probe("SET k v NX PX 30000", List.of("SET", "ceiling:__rand_int__", "v", "NX", "PX", "30000")),
                new Probe("EVALSHA compare-and-delete", List.of("EVALSHA", compareAndDeleteSha, "1", "ceiling:__rand_int__", "v")),
                new Probe("PING", List.of("PING")));
    }

    /** The command line, for the report. */
    public String commandLine(Probe probe, int clients, int requests) {
        return String.join(" ", arguments(probe, clients, requests)).replace(binary, "redis-benchmark")
            .replace(" " + redis.port() + " ", " <port> ")
            .replace(compareAndDeleteSha, "<sha of compare-and-delete>");
    }

    /** Requests per second that redis-benchmark measured. */
    public double requestsPerSecond(Probe probe, int clients, int requests) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(arguments(probe, clients, requests)).redirectErrorStream(true).start();
        String output;
        try {
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
        finally {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        // -q prints progress with carriage returns, then the final figure last
        Matcher matcher = REQUESTS_PER_SECOND.matcher(output);
        double last = Double.NaN;
        while (matcher.find()) {
            last = Double.parseDouble(matcher.group(1));
        }
        if (Double.isNaN(last)) {
            throw new IOException("redis-benchmark printed no figure: " + output);
        }
        return last;
    }

    private List<String> arguments(Probe probe, int clients, int requests) {
        List<String> command = new ArrayList<>(List.of(binary, "-h", redis.host(), "-p", Integer.toString(redis.port()),
                "-q", "-n", Integer.toString(requests), "-c", Integer.toString(clients), "-r", "100000"));
        command.addAll(probe.args());
        return command;
    }

    private static String findBinary() {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            File candidate = new File(dir, "redis-benchmark");
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate.getAbsolutePath();
            }
        }
        return null;
    }
}
