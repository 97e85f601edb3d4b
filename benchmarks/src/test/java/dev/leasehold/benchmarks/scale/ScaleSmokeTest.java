package dev.leasehold.benchmarks.scale;

import java.util.concurrent.TimeUnit;

import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the Scale part from rotting in the normal build: Leasehold and Redisson hold, wait and share one key at a
 * tiny size against a real redis-server of the benchmark's own. The figures mean little at this size, but no lease
 * may be lost, every waiter must be granted, exclusion must hold, and Leasehold's renewals must go in batches.
 */
class ScaleSmokeTest {

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void leaseholdAndAPeerHoldWaitAndShareAtASmallScale() throws Exception {
        Assumptions.assumeTrue(System.getenv(TestRedisServers.URL_VARIABLE) == null,
                "a shared Redis is configured through " + TestRedisServers.URL_VARIABLE);
        ScaleSettings settings = ScaleSettings.parse(new String[] { "--quick --parts=held,instances,waiters --contenders=leasehold,redisson --locks=1500"
                + " --instances=2 --seconds=0.5 --keys=20 --waiters-per-key=4 --waiter-hold-ms=50" });

        ScaleReport report = ScaleBenchmarkMain.run(settings);

        assertThat(report.problems(LeaseholdScale.ID)).as("leases lost, violations, errors, waiters never granted").isZero();
        assertThat(report.problems(RedissonScale.ID)).as("the peer too, at this size").isZero();
        int scriptCallsPerTick = java.util.Arrays.asList(HeldLocksPart.METRICS).indexOf("script calls / tick");
        // 1,500 locks: two batches a tick (a lock per call would be 1,500)
        assertThat(report.median("held", LeaseholdScale.ID, scriptCallsPerTick)).isBetween(0.5, 10.0);
        assertThat(report.median("instances", LeaseholdScale.ID + " x2", 0)).as("acquisitions/s").isPositive();
        assertThat(report.median("waiters", RedissonScale.ID, 1)).as("wake-up p99 measured").isPositive();
        assertThat(report.render(settings)).contains("### Held locks", "### Many instances", "### Many waiters");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void leaseholdOnAClusterStaysOnEachKeysMasterAndSurvivesASlotMigration() throws Exception {
        Assumptions.assumeTrue(System.getenv(TestRedisServers.URL_VARIABLE) == null,
                "a shared Redis is configured through " + TestRedisServers.URL_VARIABLE);
        ScaleSettings settings = ScaleSettings.parse(new String[] { "--quick --parts=cluster --masters=3 --seconds=0.3 --locks=300" });

        ScaleReport report = ScaleBenchmarkMain.run(settings);

        assertThat(report.problems(LeaseholdScale.ID)).as("errors, lost locks, violations").isZero();
        String row = LeaseholdScale.ID + " 3 masters";
        java.util.List<String> metrics = java.util.Arrays.asList(ClusterPart.METRICS);
        assertThat(report.median("cluster", row, metrics.indexOf("MOVED + ASK"))).as("cross-node traffic").isZero();
        assertThat(report.median("cluster", row, metrics.indexOf("PUBLISH (broadcast)"))).as("sharded wake-ups").isZero();
        assertThat(report.median("cluster", row, metrics.indexOf("SPUBLISH / grant"))).isPositive();
        assertThat(report.median("cluster", row, metrics.indexOf("per-master commands / acq min"))).isPositive();
        assertThat(report.median("migration", row, java.util.Arrays.asList(SlotMigrationPart.METRICS).indexOf("keys moved")))
            .as("the held locks' keys at least").isGreaterThanOrEqualTo(SlotMigrationPart.HELD);
        assertThat(report.median("migration", row, java.util.Arrays.asList(SlotMigrationPart.METRICS).indexOf("held locks kept")))
            .isEqualTo(SlotMigrationPart.HELD);
        assertThat(report.render(settings)).contains("### Cluster", "### Slot migration");
    }
}
