package dev.leasehold.benchmarks.load;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.stream.Collectors;

/**
 * What one run (in one JVM, or merged over two) measured.
 *
 * @param acquisitions      successful acquisitions that started inside the window
 * @param timeouts          tries whose wait ran out
 * @param errors            tries that threw
 * @param violations        critical sections that found another holder inside
 * @param firstProblem      text of the first violation or error, or null
 * @param waitsNanos        wait before each acquisition, sorted
 * @param seconds           length of the window
 * @param perClientThreads  acquisitions of each thread, one array per client (contender instance; one per JVM
 *                          when each JVM has one), for the fairness figures
 */
public record RunResult(long acquisitions, long timeouts, long errors, long violations, String firstProblem,
        long[] waitsNanos, double seconds, long[][] perClientThreads) {

    public double perSecond() {
        return acquisitions / seconds;
    }

    /** The wait at quantile q (0..1), in microseconds; NaN without samples. */
    public double waitMicros(double q) {
        if (waitsNanos.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.min(waitsNanos.length - 1, Math.max(0, Math.ceil(q * waitsNanos.length) - 1));
        return waitsNanos[index] / 1000.0;
    }

    /** Fewest acquisitions of any thread over most of any thread, over every thread of every client (1 = even). */
    public double fewestToMostPerThread() {
        long[] all = Arrays.stream(perClientThreads).flatMapToLong(Arrays::stream).toArray();
        long most = Arrays.stream(all).max().orElse(0);
        return most == 0 ? Double.NaN : (double) Arrays.stream(all).min().orElse(0) / most;
    }

    /** The share of all acquisitions that the client with the fewest took; NaN with one client. */
    public double smallestClientShare() {
        if (perClientThreads.length < 2) {
            return Double.NaN;
        }
        long[] sums = Arrays.stream(perClientThreads).mapToLong(threads -> Arrays.stream(threads).sum()).toArray();
        long total = Arrays.stream(sums).sum();
        return total == 0 ? Double.NaN : (double) Arrays.stream(sums).min().orElse(0) / total;
    }

    public RunResult plus(RunResult other) {
        long[] waits = new long[waitsNanos.length + other.waitsNanos.length];
        System.arraycopy(waitsNanos, 0, waits, 0, waitsNanos.length);
        System.arraycopy(other.waitsNanos, 0, waits, waitsNanos.length, other.waitsNanos.length);
        Arrays.sort(waits);
        long[][] clients = Arrays.copyOf(perClientThreads, perClientThreads.length + other.perClientThreads.length);
        System.arraycopy(other.perClientThreads, 0, clients, perClientThreads.length, other.perClientThreads.length);
        return new RunResult(acquisitions + other.acquisitions, timeouts + other.timeouts, errors + other.errors,
                violations + other.violations, firstProblem != null ? firstProblem : other.firstProblem, waits,
                Math.max(seconds, other.seconds), clients);
    }

    /** One line for the pipe between the two JVMs. */
    public String encode() {
        String problem = firstProblem == null ? "-"
                : Base64.getEncoder().encodeToString(firstProblem.getBytes(StandardCharsets.UTF_8));
        String waits = waitsNanos.length == 0 ? "-" : join(waitsNanos);
        String clients = Arrays.stream(perClientThreads).map(RunResult::join).collect(Collectors.joining(";"));
        return acquisitions + " " + timeouts + " " + errors + " " + violations + " " + problem + " " + seconds + " "
                + waits + " " + (clients.isEmpty() ? "-" : clients);
    }

    public static RunResult decode(String[] fields, int from) {
        String problem = fields[from + 4].equals("-") ? null
                : new String(Base64.getDecoder().decode(fields[from + 4]), StandardCharsets.UTF_8);
        long[] waits = fields[from + 6].equals("-") ? new long[0] : split(fields[from + 6]);
        long[][] clients = fields[from + 7].equals("-") ? new long[0][]
                : Arrays.stream(fields[from + 7].split(";")).map(RunResult::split).toArray(long[][]::new);
        return new RunResult(Long.parseLong(fields[from]), Long.parseLong(fields[from + 1]),
                Long.parseLong(fields[from + 2]), Long.parseLong(fields[from + 3]), problem, waits,
                Double.parseDouble(fields[from + 5]), clients);
    }

    private static String join(long[] values) {
        return Arrays.stream(values).mapToObj(Long::toString).collect(Collectors.joining(","));
    }

    private static long[] split(String values) {
        return values.isEmpty() ? new long[0] : Arrays.stream(values.split(",")).mapToLong(Long::parseLong).toArray();
    }
}
