package dev.leasehold.benchmarks.load;

import java.time.Duration;

/**
 * What the threads of one run do.
 *
 * @param threads         threads per client (contender instance) in this JVM
 * @param sharedKey       true: all threads lock {@code key}; false: thread i locks {@code key:i} (uncontended)
 * @param criticalSection how long each holder keeps the lock (zero: release at once)
 * @param readPercent     share of acquisitions that are READ (the rest WRITE); negative: all EXCLUSIVE
 */
public record Workload(int threads, String key, boolean sharedKey, Duration criticalSection, int readPercent) {

    public static Workload uncontended(int threads, String key) {
        return new Workload(threads, key, false, Duration.ZERO, -1);
    }

    public static Workload contended(int threads, String key) {
        return contended(threads, key, Duration.ofMillis(1));
    }

    public static Workload contended(int threads, String key, Duration criticalSection) {
        return new Workload(threads, key, true, criticalSection, -1);
    }

    public static Workload readHeavy(int threads, String key, int readPercent) {
        return new Workload(threads, key, true, Duration.ofMillis(1), readPercent);
    }

    public String encode() {
        return threads + " " + key + " " + sharedKey + " " + criticalSection.toNanos() + " " + readPercent;
    }

    public static Workload decode(String[] fields, int from) {
        return new Workload(Integer.parseInt(fields[from]), fields[from + 1], Boolean.parseBoolean(fields[from + 2]),
                Duration.ofNanos(Long.parseLong(fields[from + 3])), Integer.parseInt(fields[from + 4]));
    }
}
