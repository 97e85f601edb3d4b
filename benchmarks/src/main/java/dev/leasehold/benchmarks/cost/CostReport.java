package dev.leasehold.benchmarks.cost;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/** The cost benchmark's Markdown report: medians of the trials, and ratios taken within each trial. */
final class CostReport {

    private CostReport() {
    }

    static String row(String id, int threads) {
        return id + " @" + threads;
    }

    /** {@code evalsha 2.0×1.9µs, set 2.0×0.6µs}: calls and Redis µs per call, per cycle. */
    static String commands(CycleCost cost) {
        StringBuilder out = new StringBuilder();
        cost.commandMicros().forEach((command, value) -> out.append(out.isEmpty() ? "" : ", ").append(command)
            .append(String.format(" %.1f×%.2fµs", value[0], value[0] > 0 ? value[1] / value[0] : 0)));
        return out.toString();
    }

    static String markdown(Map<String, CostContenders.Entry> contenders, List<Integer> threadCounts,
            Map<String, List<CycleCost>> runs, int trials, double seconds) {
        StringBuilder out = new StringBuilder("# Cost per uncontended cycle\n\n");
        out.append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
            .append(" cores, Java ").append(Runtime.version()).append(", load average at the end ")
            .append(String.format("%.2f", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()))
            .append(". Medians of ").append(trials).append(" trials of ").append(seconds)
            .append(" s; each thread locks and unlocks a key of its own (empty critical section). Client: CPU time ")
            .append("of the whole JVM, bytes allocated by all its threads, and times its threads blocked (voluntary ")
            .append("context switches: hand-overs between threads, which do not grow with the machine's load), per cycle; ")
            .append("\"of it Java threads\" leaves out the JIT compiler's and the GC's threads. Redis: commands executed ")
            .append("(inside scripts too, `INFO commandstats`) and CPU (`INFO cpu`, user + system) per cycle, summed ")
            .append("over the servers the contender uses.\n\n");
        out.append("| contender | threads | cycles/s | client CPU µs/cycle | of it Java threads | client bytes/cycle "
                + "| client thread waits/cycle | Redis commands/cycle | Redis CPU µs/cycle |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int threads : threadCounts) {
            contenders.forEach((id, entry) -> {
                List<CycleCost> costs = runs.get(row(id, threads));
                out.append(String.format("| %s | %d | %,.0f | %.1f | %.1f | %,.0f | %.1f | %.1f | %.1f |%n", entry.name(),
                        threads, median(costs, CycleCost::cyclesPerSecond), median(costs, CycleCost::clientCpuMicros),
                        median(costs, CycleCost::javaThreadsCpuMicros),
                        median(costs, CycleCost::allocatedBytes), median(costs, CycleCost::threadWaits),
                        median(costs, CycleCost::redisCommands),
                        median(costs, CycleCost::redisCpuMicros)));
            });
        }
        out.append("\nRatios within each trial (median over trials):\n\n");
        for (int threads : threadCounts) {
            for (String[] pair : new String[][] { { CostContenders.LEASEHOLD, CostContenders.FLOOR },
                    { CostContenders.REDISSON, CostContenders.FLOOR }, { CostContenders.QUORUM_3, CostContenders.NODE },
                    { CostContenders.QUORUM_3_UNSHARED, CostContenders.NODE } }) {
                List<CycleCost> ours = runs.get(row(pair[0], threads));
                List<CycleCost> theirs = runs.get(row(pair[1], threads));
                if (ours == null || theirs == null) {
                    continue;
                }
                out.append(String.format("- %s / %s, %d thread%s: cycles/s %s, client CPU %s (Java threads %s), "
                        + "Redis CPU %s%n", pair[0], pair[1], threads, threads == 1 ? "" : "s",
                        ratio(ours, theirs, CycleCost::cyclesPerSecond), ratio(ours, theirs, CycleCost::clientCpuMicros),
                        ratio(ours, theirs, CycleCost::javaThreadsCpuMicros), ratio(ours, theirs, CycleCost::redisCpuMicros)));
            }
        }
        out.append("\nRedis commands per cycle (calls × µs per call, median over trials):\n\n")
            .append("| contender | threads | commands |\n|---|---:|---|\n");
        for (int threads : threadCounts) {
            contenders.forEach((id, entry) -> out.append("| ").append(entry.name()).append(" | ").append(threads)
                .append(" | ").append(commands(medianCommands(runs.get(row(id, threads))))).append(" |\n"));
        }
        return out.toString();
    }

    private static CycleCost medianCommands(List<CycleCost> costs) {
        Map<String, double[]> medians = new TreeMap<>();
        costs.get(0).commandMicros().keySet().forEach(command -> medians.put(command, new double[] {
            median(costs, cost -> cost.commandMicros().getOrDefault(command, new double[2])[0]),
            median(costs, cost -> cost.commandMicros().getOrDefault(command, new double[2])[1]) }));
        return new CycleCost(0, 0, 0, 0, 0, 0, 0, medians);
    }

    private static String ratio(List<CycleCost> ours, List<CycleCost> theirs, ToDoubleFunction<CycleCost> figure) {
        double[] ratios = new double[Math.min(ours.size(), theirs.size())];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = figure.applyAsDouble(ours.get(i)) / figure.applyAsDouble(theirs.get(i));
        }
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        StringBuilder trials = new StringBuilder();
        for (double value : ratios) {
            trials.append(trials.isEmpty() ? "" : ", ").append(String.format("%.2f", value));
        }
        return String.format("**%.2f** (%s)", sorted[sorted.length / 2], trials);
    }

    private static double median(List<CycleCost> costs, ToDoubleFunction<CycleCost> figure) {
        double[] values = costs.stream().mapToDouble(figure).sorted().toArray();
        return values[values.length / 2];
    }
}
