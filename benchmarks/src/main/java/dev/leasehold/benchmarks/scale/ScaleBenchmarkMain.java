package dev.leasehold.benchmarks.scale;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * The Scale part (issue 21): held locks, many waiters and many instances on one key, for Leasehold, Redisson
 * and Spring Integration's RedisLockRegistry in the same run, on a redis-server of its own on a free loopback
 * port. Every figure is the median of the trials; ratios against Redisson are taken within each trial.
 * <p>
 * {@code ./mvnw -B -pl benchmarks -am verify -Pscale-benchmarks -DskipTests}
 */
public final class ScaleBenchmarkMain {

    public static void main(String[] args) throws Exception {
        ScaleSettings settings = ScaleSettings.parse(args);
        ScaleReport report = run(settings);
        String text = report.render(settings);
        if (settings.results() != null) {
            Path results = Path.of(settings.results()).toAbsolutePath();
            Files.writeString(results, text);
            // the curves next to the report
            ScalePlots.draw(results, results.getParent().resolve("scale-plots"));
        }
        System.out.println(text);
        // a peer's lost leases or timed-out waiters are its figures; Leasehold's fail the run
        System.exit(report.problems(LeaseholdScale.ID) > 0 ? 2 : 0);
    }

    static ScaleReport run(ScaleSettings settings) throws Exception {
        ScaleReport report = new ScaleReport(settings.trials());
        report.loadBefore = ScaleReport.loadAverage();
        boolean standaloneParts = settings.parts().stream().anyMatch(part -> !part.equals("cluster"));
        if (standaloneParts) {
            runStandalone(settings, report);
        }
        if (settings.parts().contains("cluster")) {
            runCluster(settings, report);
        }
        report.loadAfter = ScaleReport.loadAverage();
        return report;
    }

    private static void runStandalone(ScaleSettings settings, ScaleReport report) throws Exception {
        // the whole data set stays in memory: no saving while a million locks are held
        try (TestRedisServer redis = TestRedisServers.startOwn(List.of("--save", "", "--appendonly", "no"), Map.of())) {
            report.redisVersion = redis.version();
            if (!settings.quick()) {
                warmUp(settings, redis);
            }
            for (int trial = 0; trial < settings.trials(); trial++) {
                for (String contender : settings.contenders()) {
                    runTrial(settings, redis, report, trial, contender);
                }
            }
        }
    }

    private static void runTrial(ScaleSettings settings, TestRedisServer redis, ScaleReport report, int trial,
            String contender) throws Exception {
        if (settings.parts().contains("held")) {
            double[] row = HeldLocksPart.measure(contender, redis, settings.heldLocks(), settings.lease(),
                    settings.leasePeriods());
            report.put("held", contender, trial, row);
            log(trial, "held " + contender, HeldLocksPart.METRICS, row);
        }
        if (settings.parts().contains("instances")) {
            for (int instances : settings.instanceCounts()) {
                double[] row = InstancesPart.measure(contender, redis, instances, settings.lease(), settings.seconds());
                report.put("instances", contender + " x" + instances, trial, row);
                log(trial, "instances " + contender + " x" + instances, InstancesPart.METRICS, row);
            }
        }
        if (settings.parts().contains("keys")) {
            double[] row = DistinctKeysPart.measure(contender, redis, settings.distinctKeys(), settings.lease());
            report.put("keys", contender, trial, row);
            log(trial, "keys " + contender, DistinctKeysPart.METRICS, row);
        }
        if (settings.parts().contains("waiters")) {
            double[] row = WaitersPart.measure(contender, redis, settings.waiterKeys(), settings.waitersPerKey(),
                    settings.lease(), settings.waiterHold());
            report.put("waiters", contender, trial, row);
            log(trial, "waiters " + contender, WaitersPart.METRICS, row);
        }
    }

    /** Item 5: Leasehold on a cluster of its own per size, each trial on the same cluster (a slot moved per trial). */
    private static void runCluster(ScaleSettings settings, ScaleReport report) throws Exception {
        int heldLocks = Math.min(settings.heldLocks(), 3_000);
        for (int masters : settings.masters()) {
            try (TestRedisCluster cluster = TestRedisCluster.start(masters)) {
                if ("?".equals(report.redisVersion)) {
                    report.redisVersion = cluster.nodes().get(0).version();
                }
                ClusterNodes nodes = new ClusterNodes(cluster);
                String row = LeaseholdScale.ID + " " + masters + " masters";
                // two clients for every trial: connections and scripts on every master, as a running service has
                try (ClusterEngine engine = new ClusterEngine(nodes, ClusterPart.LEASE);
                        ClusterEngine second = new ClusterEngine(nodes, ClusterPart.LEASE)) {
                    if (!settings.quick()) {
                        ClusterPart.measure(nodes, engine, second, 1, 100);
                        System.out.println("warmed up cluster of " + masters);
                    }
                    for (int trial = 0; trial < settings.trials(); trial++) {
                        double[] cost = ClusterPart.measure(nodes, engine, second, settings.seconds(), heldLocks);
                        report.put("cluster", row, trial, cost);
                        log(trial, "cluster " + row, ClusterPart.METRICS, cost);
                        double[] migration = SlotMigrationPart.measure(nodes, engine, second,
                                Math.min(settings.seconds(), 2));
                        report.put("migration", row, trial, migration);
                        log(trial, "migration " + row, SlotMigrationPart.METRICS, migration);
                    }
                }
            }
        }
    }

    /** One small unmeasured round of each part and contender, so no trial runs on a cold JIT. */
    private static void warmUp(ScaleSettings settings, TestRedisServer redis) throws Exception {
        for (String contender : settings.contenders()) {
            if (settings.parts().contains("held")) {
                HeldLocksPart.measure(contender, redis, Math.min(2_000, settings.heldLocks()), settings.lease(), 0);
            }
            if (settings.parts().contains("instances")) {
                InstancesPart.measure(contender, redis, 2, settings.lease(), Math.min(1, settings.seconds()));
            }
            if (settings.parts().contains("waiters")) {
                WaitersPart.measure(contender, redis, Math.min(50, settings.waiterKeys()), 4, settings.lease(),
                        Duration.ofMillis(100));
            }
            if (settings.parts().stream().anyMatch(part -> !part.equals("cluster"))) {
                System.out.println("warmed up " + contender);
            }
        }
    }

    private static void log(int trial, String what, String[] metrics, double[] row) {
        StringBuilder line = new StringBuilder("trial " + (trial + 1) + " " + what + ":");
        for (int i = 0; i < metrics.length; i++) {
            line.append(String.format(" %s=%.3f", metrics[i], row[i]));
        }
        System.out.println(line);
    }
}
