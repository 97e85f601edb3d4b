package dev.leasehold.benchmarks;

import dev.leasehold.benchmarks.jmh.JmhRunner;

import static dev.leasehold.benchmarks.Figures.*;

/** The report's JMH table and the interception-cost target that comes from it. */
final class JmhSection {

    private final Measurements m;

    private final Settings settings;

    private final StringBuilder out;

    JmhSection(Measurements measurements, Settings settings, StringBuilder out) {
        this.m = measurements;
        this.settings = settings;
        this.out = out;
    }

    void table() {
        if (!settings.jmh()) {
            return;
        }
        line("## JMH: one-thread lock+unlock cycle, and what the annotation costs");
        line();
        line("`dev.leasehold.benchmarks.jmh`, one fork, brief (see the annotations on each class); against the "
                + "same server. Score ± 99.9% error.");
        line();
        if (m.jmh.isEmpty()) {
            line("No result (see Problems).");
            line();
            return;
        }
        line("| benchmark | score | error | unit |");
        line("|---|---:|---:|---|");
        for (JmhRunner.Result result : m.jmh) {
            line("| " + result.benchmark() + " | " + number(result.score()) + " | ± " + number(result.error()) + " | "
                    + result.unit() + " |");
        }
        line();
    }

    /** {@code @DistributedLock}'s own cost: the annotated call minus the same lock taken by hand (JMH). */
    void interceptionTarget() {
        Double annotated = jmhScore("InterceptionCostBenchmark.annotatedCall");
        Double byHand = jmhScore("InterceptionCostBenchmark.lockedByHand");
        if (annotated == null || byHand == null) {
            line("| Interception cost < 2 µs per call | Leasehold @DistributedLock | | n/a (JMH not run) |");
            return;
        }
        double costNanos = annotated - byHand;
        target("Interception cost < 2 µs per call", "Leasehold @DistributedLock",
                number(costNanos) + " ns per call (JMH: annotated " + number(annotated) + " ns − by hand "
                        + number(byHand) + " ns)", costNanos < 2000, costNanos);
    }

    private Double jmhScore(String benchmark) {
        return m.jmh.stream().filter(result -> result.benchmark().equals(benchmark)).map(JmhRunner.Result::score)
            .findFirst().orElse(null);
    }

    private void target(String target, String contender, String figure, boolean met, double value) {
        line(targetRow(target, contender, figure, met, value));
    }

    private void line(String text) {
        out.append(text).append('\n');
    }

    private void line() {
        out.append('\n');
    }
}
