package dev.leasehold.benchmarks.scale;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** The Scale part's figures per part, row (contender, size) and trial, rendered as medians in Markdown. */
final class ScaleReport {

    private final int trials;

    /** part -> row -> trial -> metrics */
    private final Map<String, Map<String, double[][]>> figures = new LinkedHashMap<>();

    String loadBefore = "?";

    String loadAfter = "?";

    String redisVersion = "?";

    ScaleReport(int trials) {
        this.trials = trials;
    }

    void put(String part, String row, int trial, double[] metrics) {
        figures.computeIfAbsent(part, p -> new LinkedHashMap<>()).computeIfAbsent(row, r -> new double[trials][])[trial] = metrics;
    }

    /** The median over the trials of metric {@code m} of a row; NaN when the row was not measured. */
    double median(String part, String row, int metric) {
        double[][] rows = figures.getOrDefault(part, Map.of()).get(row);
        if (rows == null) {
            return Double.NaN;
        }
        return median(Arrays.stream(rows).filter(r -> r != null).mapToDouble(r -> r[metric]).toArray());
    }

    /** The median over the trials of {@code row / other} for metric {@code m}, each ratio taken within its trial. */
    double medianRatio(String part, String row, String other, int metric) {
        double[][] a = figures.getOrDefault(part, Map.of()).get(row);
        double[][] b = figures.getOrDefault(part, Map.of()).get(other);
        if (a == null || b == null) {
            return Double.NaN;
        }
        double[] ratios = new double[trials];
        int n = 0;
        for (int t = 0; t < trials; t++) {
            if (a[t] != null && b[t] != null) {
                ratios[n++] = a[t][metric] / b[t][metric];
            }
        }
        return median(Arrays.copyOf(ratios, n));
    }

    /** Violations, errors, lost locks and waiters never granted (or granted before a release), over every trial. */
    long problems() {
        return figures.values().stream().flatMap(rows -> rows.keySet().stream())
            .map(row -> row.split(" ")[0]).distinct().mapToLong(this::problems).sum();
    }

    /** The same for one contender's rows. */
    long problems(String contender) {
        long total = 0;
        total += sum("held", contender, HeldLocksPart.METRICS, "locks lost");
        total += sum("instances", contender, InstancesPart.METRICS, "violations + errors");
        total += sum("waiters", contender, WaitersPart.METRICS, "not granted");
        total += sum("keys", contender, DistinctKeysPart.METRICS, "errors");
        total += sum("keys", contender, DistinctKeysPart.METRICS, "keys without TTL");
        total += sum("waiters", contender, WaitersPart.METRICS, "granted before release");
        total += sum("cluster", contender, ClusterPart.METRICS, "errors + lost");
        total += sum("migration", contender, SlotMigrationPart.METRICS, "errors");
        total += sum("migration", contender, SlotMigrationPart.METRICS, "locks lost");
        total += sum("migration", contender, SlotMigrationPart.METRICS, "exclusion violations");
        return total;
    }

    private long sum(String part, String contender, String[] metrics, String name) {
        int m = Arrays.asList(metrics).indexOf(name);
        return figures.getOrDefault(part, Map.of()).entrySet().stream()
            .filter(row -> row.getKey().split(" ")[0].equals(contender)).flatMap(row -> Arrays.stream(row.getValue()))
            .filter(r -> r != null).mapToLong(r -> (long) r[m]).sum();
    }

    String render(ScaleSettings settings) {
        StringBuilder out = new StringBuilder();
        out.append("## Scale run ").append(ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_INSTANT))
            .append("\n\n");
        out.append("redis-server ").append(redisVersion).append(" on loopback (no persistence), ")
            .append(Runtime.getRuntime().availableProcessors()).append(" cores, load average before ")
            .append(loadBefore).append(", after ").append(loadAfter).append("; ").append(settings.trials())
            .append(" trials, medians; watchdog lease ").append(settings.lease().toMillis()).append(" ms for every library")
            .append(" (a tick is a third of it).\n\n");
        table(out, "held", "Held locks: " + settings.heldLocks() + " locks held at once by one client for "
                + settings.leasePeriods() + " lease periods", HeldLocksPart.METRICS);
        if (figures.containsKey("held")) {
            out.append("Leasehold / Redisson, Redis bytes per lock (ratio within each trial, median): ")
                .append(format(medianRatio("held", LeaseholdScale.ID, RedissonScale.ID, 0))).append("\n\n");
        }
        table(out, "instances", "Many instances on one key: independent clients x " + InstancesPart.THREADS_PER_INSTANCE
                + " threads, 1 ms section, " + settings.seconds() + " s per run", InstancesPart.METRICS);
        table(out, "keys", "Many distinct keys: " + settings.distinctKeys() + " distinct keys locked and released in turn"
                + " by one client (8 threads)", DistinctKeysPart.METRICS);
        table(out, "waiters", "Many waiters: " + settings.waiterKeys() * settings.waitersPerKey() + " waiters on "
                + settings.waiterKeys() + " keys over " + WaitersPart.CLIENTS + " independent clients in one JVM, each holder keeps"
                + " its key " + settings.waiterHold().toMillis() + " ms (releases at an even pace)",
                WaitersPart.METRICS);
        table(out, "cluster", "Cluster: " + ClusterPart.THREADS + " threads over " + ClusterPart.KEYS
                + " keys, one client, lease " + ClusterPart.LEASE.toMillis() + " ms; per master = that master's"
                + " commands (CPU) / the acquisitions whose key it owns", ClusterPart.METRICS);
        table(out, "migration", "Slot migration under load: the hot key's slot moved to the next master while"
                + " 2 clients x 2 threads share the hot key, 4 threads cycle 10,000 keys and "
                + SlotMigrationPart.HELD + " locks in the slot are held", SlotMigrationPart.METRICS);
        return out.toString();
    }

    private void table(StringBuilder out, String part, String title, String[] metrics) {
        Map<String, double[][]> rows = figures.get(part);
        if (rows == null) {
            return;
        }
        out.append("### ").append(title).append("\n\n| |");
        for (String metric : metrics) {
            out.append(' ').append(metric).append(" |");
        }
        out.append("\n|---|").append("---|".repeat(metrics.length)).append('\n');
        for (String row : rows.keySet()) {
            out.append("| ").append(row).append(" |");
            for (int m = 0; m < metrics.length; m++) {
                out.append(' ').append(format(median(part, row, m))).append(" |");
            }
            out.append('\n');
        }
        out.append('\n');
    }

    static String format(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        if (Math.abs(value) >= 100 || value == Math.rint(value)) {
            return String.format("%,.0f", value);
        }
        return String.format("%.2f", value);
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + " / " + fields[1] + " / " + fields[2];
        }
        catch (IOException ex) {
            return "unknown";
        }
    }
}
