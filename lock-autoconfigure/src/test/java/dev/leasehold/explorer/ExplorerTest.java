package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import dev.leasehold.engine.support.EngineClock;

import static org.assertj.core.api.Assertions.fail;

/**
 * Runs the deterministic explorer ({@link Explorer}) over fresh seeds for a bounded time, and fails with the first
 * violation: the seed, what broke, the trace of the run's steps and the command that replays it.
 * <p>
 * It needs a JVM whose engine clock may be replaced ({@code -Dleasehold.engine.virtual-clock=true}): the build's
 * {@code explorer} surefire execution starts one; anywhere else it is skipped.
 * <ul>
 * <li>{@code -Dexplorer.seconds=N}: how long to explore (default 60)</li>
 * <li>{@code -Dexplorer.seed=S}: the first seed (default: from the clock; seeds S, S+1, ... follow)</li>
 * <li>{@code -Dexplorer.runs=N}: at most this many runs (a replay: {@code -Dexplorer.runs=1})</li>
 * <li>{@code -Dexplorer.trace=true}: print every run's trace</li>
 * <li>{@code -Dexplorer.hand-offs=true}: every run a hand-off run (else every fourth seed, see
 * {@link RunConfig#forSeed})</li>
 * <li>{@code -Dexplorer.liveness=true}: every run a liveness run (the fair queue's liveness keys; else every eighth
 * seed, see {@link RunConfig#livenessRun})</li>
 * <li>{@code -Dexplorer.replica-ack=true}: every run with a replica and replica acknowledgement, {@code
 * -Dexplorer.failover=true}: with a replica and no acknowledgement (else seeds 5 and 7 more than a multiple of 8, see
 * {@link SimReplica})</li>
 * <li>{@code -Dexplorer.cluster=true}: every run a Cluster run (a slot's migration while the watchdog renews in
 * batches; else seeds 27 more than a multiple of 32, see {@link ClusterRun})</li>
 * <li>{@code -Dexplorer.repeat=true}: run the first seed again and again (a run that does not replay step for step:
 * how often it fails)</li>
 * <li>{@code -Dexplorer.fingerprints=true}: print one line per run (steps, virtual time, hashes of its trace, sections
 * and violations), no wall times: a run replayed step for step prints the same line (across JVMs, on a busy machine
 * too, most are: see docs/testing-leasehold.md)</li>
 * </ul>
 */
class ExplorerTest {

    @Test
    void theEngineKeepsItsContractUnderEveryScheduleTried() {
        Assumptions.assumeTrue(EngineClock.replaceable(),
                "the explorer runs in the 'explorer' surefire execution (-Dleasehold.engine.virtual-clock=true)");
        long seconds = Long.getLong("explorer.seconds", 60);
        long firstSeed = Long.getLong("explorer.seed", System.currentTimeMillis() % 1_000_000);
        long runs = Long.getLong("explorer.runs", Long.MAX_VALUE);
        boolean printTraces = Boolean.getBoolean("explorer.trace");
        long seedStep = Boolean.getBoolean("explorer.repeat") ? 0 : 1;
        long began = System.nanoTime();
        long until = began + seconds * 1_000_000_000L;
        long steps = 0;
        long virtualMillis = 0;
        int done = 0;
        List<Explorer.Result> failed = new ArrayList<>();
        for (long seed = firstSeed; done < runs && System.nanoTime() - until < 0; seed += seedStep) {
            long runBegan = System.nanoTime();
            Explorer.Result result = Explorer.run(seed, RunConfig.forSeed(seed));
            if (Boolean.getBoolean("explorer.debug")) {
                System.out.printf("seed %d: %d steps in %.0f ms%n", seed, result.steps(), (System.nanoTime() - runBegan) / 1e6);
            }
            if (Boolean.getBoolean("explorer.fingerprints")) {
                System.out.println(fingerprint(result));
            }
            done++;
            steps += result.steps();
            virtualMillis += result.virtualMillis();
            if (printTraces) {
                result.trace().forEach(System.out::println);
            }
            if (!result.clean()) {
                failed.add(result);
                System.out.printf("Explorer: first violation after %.1f s (run %d, seed %d): %s%n",
                        (System.nanoTime() - began) / 1e9, done, seed, result.violations().get(0));
                break;
            }
        }
        System.out.printf("Explorer: %d runs from seed %d, %d steps, %.1f s of virtual time, %d with violations"
                + " (%.1f s settling)%n", done, firstSeed, steps, virtualMillis / 1000.0, failed.size(), Settler.settleNanos / 1e9);
        if (!failed.isEmpty()) {
            Explorer.Result result = failed.get(0);
            Explorer.Result again = Explorer.run(result.seed(), RunConfig.forSeed(result.seed()));
            fail(report(result, again));
        }
    }

    /**
     * A run in one line, wall times left out (string hashes, the same in every JVM): a run replayed step for step
     * prints the same line.
     */
    static String fingerprint(Explorer.Result result) {
        return String.format("seed %d: %d steps, %d ms virtual, trace %08x, sections %08x, violations %d %08x",
                result.seed(), result.steps(), result.virtualMillis(), result.trace().hashCode(),
                result.sections().toString().hashCode(), result.violations().size(),
                result.violations().toString().hashCode());
    }

    static String report(Explorer.Result result, Explorer.Result again) {
        StringBuilder text = new StringBuilder("The explorer found a violation with seed " + result.seed() + " ("
                + result.steps() + " steps, " + result.virtualMillis() + " ms of virtual time):\n");
        result.violations().forEach(violation -> text.append("  ").append(violation).append('\n'));
        text.append("Replayed at once: ").append(again.trace().equals(result.trace()) ? "the same run, step for step"
                : again.clean() ? "NOT reproduced (a caller's thread woke late: see docs/testing-leasehold.md)"
                        : "the same violations, after a different run").append('\n');
        for (int i = 0; i < Math.min(again.trace().size(), result.trace().size()); i++) {
            if (!again.trace().get(i).equals(result.trace().get(i))) {
                text.append("  the replay left the run at step ").append(i).append(": ").append(result.trace().get(i))
                    .append(" / ").append(again.trace().get(i)).append('\n');
                for (int j = Math.max(0, i - 12); j < Math.min(i + 4, Math.min(again.trace().size(), result.trace().size())); j++) {
                    text.append("    ").append(result.trace().get(j)).append("   |   ").append(again.trace().get(j)).append('\n');
                }
                break;
            }
        }
        // the run's shape as this JVM chose it (a seed makes another run without the option)
        String shape = java.util.stream.Stream.of("explorer.quorum", "explorer.liveness", "explorer.hand-offs",
                "explorer.cluster", "explorer.replica-ack", "explorer.failover")
            .filter(Boolean::getBoolean).map(option -> " -D" + option + "=true").collect(java.util.stream.Collectors.joining());
        text.append("Replay: ./mvnw -B -pl lock-autoconfigure -am test -Pexplorer"
                + " -Dexplorer.seed=" + result.seed() + " -Dexplorer.runs=1 -Dexplorer.trace=true" + shape + "\n");
        text.append("Sections (grant to close, virtual ms):\n");
        result.sections().forEach(section -> text.append("  ").append(section).append('\n'));
        List<String> trace = result.trace();
        int from = Math.max(0, trace.size() - 150);
        text.append("The run's last ").append(trace.size() - from).append(" of ").append(trace.size()).append(" steps:\n");
        trace.subList(from, trace.size()).forEach(step -> text.append("  ").append(step).append('\n'));
        return text.toString();
    }
}
