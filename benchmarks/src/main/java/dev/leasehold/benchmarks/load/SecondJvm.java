package dev.leasehold.benchmarks.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.leasehold.benchmarks.contenders.Contender;
import dev.leasehold.benchmarks.contenders.Contenders;
import dev.leasehold.benchmarks.contenders.Redis;

/**
 * The second JVM of the two-JVM scenario, and the main JVM's handle on it. The main JVM starts it with the
 * same java binary and class path; they talk in lines over its stdin and stdout, lines of the protocol
 * starting with {@value #PREFIX} (anything else it prints, such as logs, is passed on to stderr).
 * Both JVMs start a run at the same wall-clock time and each checks exclusion through the shared
 * counters in Redis.
 */
public final class SecondJvm implements AutoCloseable {

    static final String PREFIX = "@@bench ";

    /** The argument that makes {@code BenchmarkMain} run as the second JVM. */
    public static final String WORKER_ARGUMENT = "worker";

    private final Process process;

    private final PrintWriter commands;

    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();

    private SecondJvm(Process process) {
        this.process = process;
        this.commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readReplies, "bench-second-jvm-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the second JVM; extra JVM options (such as a JFR recording) come from {@code bench.worker.jvmArgs}. */
    public static SecondJvm start(Class<?> mainClass, Redis redis) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        String extra = System.getProperty("bench.worker.jvmArgs", "").trim();
        if (!extra.isEmpty()) {
            command.addAll(List.of(extra.split("\\s+")));
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName(), WORKER_ARGUMENT,
                redis.host(), Integer.toString(redis.port())));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        SecondJvm jvm = new SecondJvm(process);
        jvm.expect("ready", Duration.ofSeconds(60));
        return jvm;
    }

    /** Asks for the contender to be created over there; answered by {@link #awaitPrepared}, in order. */
    public void prepare(String contenderId) {
        commands.println("prepare " + contenderId);
    }

    /** Null when the contender of the oldest unanswered {@link #prepare} runs there, else why it cannot. */
    public String awaitPrepared() throws IOException, InterruptedException {
        String[] reply = expect("prepared", Duration.ofSeconds(120));
        return reply[1].equals("ok") ? null : decode(reply[1]);
    }

    /** Starts a run over there; collect it with {@link #awaitResult}. */
    public void startRun(String contenderId, Workload workload, long startAtEpochMillis, Duration window) {
        commands.println("run " + contenderId + " " + startAtEpochMillis + " " + window.toMillis() + " " + workload.encode());
    }

    public RunResult awaitResult(Duration timeout) throws IOException, InterruptedException {
        return RunResult.decode(expect("result", timeout), 1);
    }

    private String[] expect(String kind, Duration timeout) throws IOException, InterruptedException {
        String line = replies.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new IOException("The second JVM did not answer '" + kind + "' within " + timeout
                    + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")"));
        }
        String[] fields = line.split(" ");
        if (fields[0].equals("failed")) {
            throw new IOException("The second JVM failed: " + decode(fields[1]));
        }
        if (!fields[0].equals(kind)) {
            throw new IOException("The second JVM answered '" + line + "' where '" + kind + "' was expected");
        }
        return fields;
    }

    private void readReplies() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith(PREFIX)) {
                    replies.add(line.substring(PREFIX.length()));
                }
                else {
                    System.err.println("[second JVM] " + line);
                }
            }
        }
        catch (IOException ex) {
            // the process ended
        }
    }

    @Override
    public void close() throws InterruptedException {
        commands.println("quit");
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    static String encode(String text) {
        return Base64.getEncoder().encodeToString(String.valueOf(text).getBytes(StandardCharsets.UTF_8));
    }

    static String decode(String text) {
        return new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8);
    }

    /** The second JVM's side: answers the main JVM until told to quit. Args: host port. */
    public static void serve(String[] args) throws IOException {
        Redis redis = new Redis(args[1], Integer.parseInt(args[2]));
        PrintWriter out = new PrintWriter(new java.io.OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        Map<String, Contender> contenders = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (ExclusionCheck check = ExclusionCheck.redis(redis)) {
            out.println(PREFIX + "ready");
            String line;
            while ((line = in.readLine()) != null && !line.equals("quit")) {
                String[] fields = line.split(" ");
                try {
                    if (fields[0].equals("prepare")) {
                        Contender contender = contenders.computeIfAbsent(fields[1], id -> Contenders.start(id, redis));
                        String reason = contender.unavailableReason();
                        out.println(PREFIX + "prepared " + (reason == null ? "ok" : encode(reason)));
                    }
                    else if (fields[0].equals("run")) {
                        Contender contender = contenders.get(fields[1]);
                        RunResult result = LoadRun.run(contender, Workload.decode(fields, 4), check,
                                Long.parseLong(fields[2]), Duration.ofMillis(Long.parseLong(fields[3])));
                        out.println(PREFIX + "result " + result.encode());
                    }
                }
                catch (Exception ex) {
                    if (fields[0].equals("prepare")) {
                        // the main JVM reports it as n/a in scenario 4 and goes on
                        out.println(PREFIX + "prepared " + encode("could not start: " + ex));
                    }
                    else {
                        out.println(PREFIX + "failed " + encode(ex.toString()));
                    }
                }
            }
        }
        finally {
            contenders.values().forEach(Contender::close);
        }
    }
}
