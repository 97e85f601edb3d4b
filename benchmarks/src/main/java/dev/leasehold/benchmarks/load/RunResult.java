package dev.leasehold.benchmarks.load;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What one run (in one JVM, or merged over two) measured.
 *
 * @param acquisitions successful acquisitions that started inside the window
 * @param timeouts     tries whose wait ran out
 * @param errors       tries that threw
 * @param violations   critical sections that found another holder inside
 * @param firstProblem text of the first violation or error, or null
 * @param waitsNanos   wait before each acquisition, sorted
 * @param seconds      length of the window
 */
public record RunResult(long acquisitions, long timeouts, long errors, long violations, String firstProblem,
        long[] waitsNanos, double seconds) {

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

    public RunResult plus(RunResult other) {
        long[] waits = new long[waitsNanos.length + other.waitsNanos.length];
        System.arraycopy(waitsNanos, 0, waits, 0, waitsNanos.length);
        System.arraycopy(other.waitsNanos, 0, waits, waitsNanos.length, other.waitsNanos.length);
        Arrays.sort(waits);
        return new RunResult(acquisitions + other.acquisitions, timeouts + other.timeouts, errors + other.errors,
                violations + other.violations, firstProblem != null ? firstProblem : other.firstProblem, waits,
                Math.max(seconds, other.seconds));
    }

    /** One line for the pipe between the two JVMs. */
    public String encode() {
        String problem = firstProblem == null ? "-" : java.util.Base64.getEncoder()
            .encodeToString(firstProblem.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String waits = waitsNanos.length == 0 ? "-"
                : Arrays.stream(waitsNanos).mapToObj(Long::toString).collect(Collectors.joining(","));
        return acquisitions + " " + timeouts + " " + errors + " " + violations + " " + problem + " " + seconds + " " + waits;
    }

    public static RunResult decode(String[] fields, int from) {
        String problem = fields[from + 4].equals("-") ? null
                : new String(java.util.Base64.getDecoder().decode(fields[from + 4]), java.nio.charset.StandardCharsets.UTF_8);
        long[] waits = fields[from + 6].equals("-") ? new long[0]
                : Arrays.stream(fields[from + 6].split(",")).mapToLong(Long::parseLong).toArray();
        return new RunResult(Long.parseLong(fields[from]), Long.parseLong(fields[from + 1]),
                Long.parseLong(fields[from + 2]), Long.parseLong(fields[from + 3]), problem, waits,
                Double.parseDouble(fields[from + 5]));
    }
}
