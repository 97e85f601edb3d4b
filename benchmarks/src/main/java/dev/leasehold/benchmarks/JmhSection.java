package dev.leasehold.benchmarks;

import dev.leasehold.benchmarks.jmh.JmhRunner;

import static dev.leasehold.benchmarks.Figures.*;

/** The report's JMH table and the interception-cost target that comes from it. */
final class JmhSection {

    private final Measurements m;

    private final Settings settings;

    private final MarkdownOut out;

    JmhSection(Measurements measurements, Settings settings, MarkdownOut out) {
        this.m = measurements;
        this.settings = settings;
        this.out = out;
    }

    void table() {
        if (!settings.jmh()) {
            return;
        }
        out.line("## JMH: one-thread lock+unlock cycle, and what the annotation costs");
        out.line();
        out.line("`dev.leasehold.benchmarks.jmh`, one fork, brief (see the annotations on each class); against the "
                + "same server. Score ± 99.9% error.");
        out.line();
        if (m.jmh.isEmpty()) {
            out.line("No result (see Problems).");
            out.line();
            return;
        }
        out.line("| benchmark | score | error | unit |");
        out.line("|---|---:|---:|---|");
        for (JmhRunner.Result result : m.jmh) {
            out.line("| " + result.benchmark() + " | " + number(result.score()) + " | ± " + number(result.error()) + " | "
                    + result.unit() + " |");
        }
        out.line();
    }

    /** {@code @DistributedLock}'s own cost: the annotated call minus the same lock taken by hand (JMH). */
    void interceptionTarget() {
        Double annotated = jmhScore("InterceptionCostBenchmark.annotatedCall");
        Double byHand = jmhScore("InterceptionCostBenchmark.lockedByHand");
        if (annotated == null || byHand == null) {
            out.line("| Interception cost < 2 µs per call | Leasehold @DistributedLock | | n/a (JMH not run) |");
            return;
        }
        double costNanos = annotated - byHand;
        out.target("Interception cost < 2 µs per call", "Leasehold @DistributedLock",
                number(costNanos) + " ns per call (JMH: annotated " + number(annotated) + " ns − by hand "
                        + number(byHand) + " ns)", costNanos < 2000, costNanos);
    }

    private Double jmhScore(String benchmark) {
        return m.jmh.stream().filter(result -> result.benchmark().equals(benchmark)).map(JmhRunner.Result::score)
            .findFirst().orElse(null);
    }

}
