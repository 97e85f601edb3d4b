package dev.leasehold.faults;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Child JVMs of the test class path running {@link FaultWorker} (or another main class), each with its own
 * log file under {@code target/faults}. Sends them signals, and kills whatever is left on {@link #close()}.
 */
final class WorkerProcesses implements AutoCloseable {

    private final String name;

    private final Map<String, Process> processes = new LinkedHashMap<>();

    private final Map<String, Path> logs = new LinkedHashMap<>();

    WorkerProcesses(String name) {
        this.name = name;
    }

    /** Starts a child JVM running {@code mainClass} with {@code args} (Spring Boot style {@code --k=v}). */
    void start(String id, Class<?> mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // a quick start matters more than peak speed here; 2 cores are shared by everything
        command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", classPath(), mainClass.getName()));
        command.addAll(args);
        Path log = Path.of("target", "faults", name, id + ".log");
        try {
            Files.createDirectories(log.getParent());
            // appended: a worker started again after a kill keeps its first life in the log
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            processes.put(id, process);
            logs.put(id, log);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The surefire test class path (surefire runs tests from a manifest-only jar, so java.class.path is not it). */
    static String classPath() {
        String testClassPath = System.getProperty("surefire.test.class.path");
        if (testClassPath != null && !testClassPath.isBlank()) {
            return testClassPath;
        }
        return System.getProperty("java.class.path");
    }

    long pid(String id) {
        return process(id).pid();
    }

    boolean isAlive(String id) {
        return process(id).isAlive();
    }

    /** SIGKILL: the process dies at once, holding what it held. */
    void kill(String id) {
        Process process = process(id);
        process.destroyForcibly();
        waitFor(process, Duration.ofSeconds(10));
    }

    /** SIGSTOP: the whole JVM freezes (its watchdog too), sockets stay open. */
    void pause(String id) {
        signal(id, "-STOP");
    }

    /** SIGCONT. */
    void resume(String id) {
        signal(id, "-CONT");
    }

    private void signal(String id, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", signal, String.valueOf(pid(id))).inheritIO().start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + signal + " " + pid(id) + " failed");
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

    /** Waits until every process has exited by itself; kills those still running after {@code timeout}. */
    void awaitExit(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Process process : processes.values()) {
            waitFor(process, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
    }

    /** Exit codes of processes that ended other than by a kill from this class (for the assertions). */
    Map<String, Integer> exitCodes() {
        Map<String, Integer> codes = new LinkedHashMap<>();
        processes.forEach((id, process) -> codes.put(id, process.isAlive() ? null : process.exitValue()));
        return codes;
    }

    /** The last lines of every worker's log, for a failure message. */
    String tails() {
        StringBuilder text = new StringBuilder();
        logs.forEach((id, log) -> {
            text.append("--- ").append(id).append(" (").append(log.toAbsolutePath()).append(")\n");
            try {
                List<String> lines = Files.readAllLines(log);
                lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(line -> text.append(line).append('\n'));
            }
            catch (IOException ex) {
                text.append(ex).append('\n');
            }
        });
        return text.toString();
    }

    File log(String id) {
        return logs.get(id).toFile();
    }

    private Process process(String id) {
        Process process = processes.get(id);
        if (process == null) {
            throw new IllegalArgumentException("no worker " + id);
        }
        return process;
    }

    private static void waitFor(Process process, Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        for (Process process : processes.values()) {
            if (process.isAlive()) {
                // a paused process ignores SIGTERM until resumed; SIGKILL works on it
                process.destroyForcibly();
            }
        }
        for (Process process : processes.values()) {
            waitFor(process, Duration.ofSeconds(10));
        }
    }
}
