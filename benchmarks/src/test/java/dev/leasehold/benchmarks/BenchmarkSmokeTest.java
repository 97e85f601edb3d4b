package dev.leasehold.benchmarks;

import java.util.concurrent.TimeUnit;

import dev.leasehold.benchmarks.contenders.Contenders;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the benchmarks from rotting in the normal build: every contender runs the smoke scenarios (the second
 * JVM and four clients in one JVM included) for a few hundred milliseconds against a real redis-server, and
 * the report renders. The
 * figures mean nothing at this length; mutual exclusion must hold anyway.
 */
class BenchmarkSmokeTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void everyContenderLocksInEveryScenarioWithoutViolatingExclusion() throws Exception {
        // the benchmark loads only a server of its own, never a shared one
        Assumptions.assumeTrue(System.getenv(TestRedisServers.URL_VARIABLE) == null,
                "a shared Redis is configured through " + TestRedisServers.URL_VARIABLE);
        Settings settings = Settings.smoke();

        Measurements measurements = new BenchmarkSuite(settings).run();

        // a peer's wait that ran out on a loaded machine is its own behaviour (the report shows it), not rot
        assertThat(measurements.problems).filteredOn(problem -> problem.startsWith("leasehold")
                || !problem.contains("waits ran out") || !problem.contains(" 0 errors")).isEmpty();
        assertThat(measurements.totalViolations()).isZero();
        for (String id : Contenders.IDS) {
            if (measurements.unavailable.containsKey(id)) {
                // only the annotation layer may be missing (it lands separately); every peer must run
                assertThat(id).isEqualTo("leasehold-annotation");
                continue;
            }
            for (Scenario scenario : settings.scenarios()) {
                boolean hasReadWrite = !id.startsWith("rlr-") && !id.equals("floor");
                if (scenario == Scenario.READ_HEAVY && !hasReadWrite) {
                    continue;
                }
                assertThat(measurements.trials(scenario, id)).as(id + " in scenario " + scenario.number)
                    .singleElement()
                    .satisfies(trial -> assertThat(trial.result().acquisitions()).isPositive())
                    // each client's threads are counted apart: the fairness figures rest on it
                    .satisfies(trial -> assertThat(trial.result().perClientThreads())
                        .hasDimensions(scenario.jvms * scenario.instancesPerJvm, scenario.threadsPerInstance));
            }
        }
        String report = new Report(measurements, settings).render();
        assertThat(report).contains("## Targets", "## Scenario 4", "## Scenario 8",
                "Several instances (scenario 8, 4 clients × 2 threads, empty section): fewest/most",
                "Mutual exclusion held in every run");
    }
}
