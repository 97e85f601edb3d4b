package dev.leasehold.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.benchmarks.contenders.Contender;
import dev.leasehold.benchmarks.contenders.Contenders;
import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.benchmarks.jmh.JmhRunner;
import dev.leasehold.benchmarks.load.ExclusionCheck;
import dev.leasehold.benchmarks.load.LoadRun;
import dev.leasehold.benchmarks.load.RunResult;
import dev.leasehold.benchmarks.load.SecondJvm;
import dev.leasehold.benchmarks.load.Workload;
import dev.leasehold.benchmarks.server.MonitorSample;
import dev.leasehold.benchmarks.server.ServerCeiling;
import dev.leasehold.benchmarks.server.ServerCounters;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * Runs every scenario for every contender on a redis-server of its own: warm-up, then trials in which the
 * contenders take turns (the order rotates each trial, so a slow phase of this shared machine does not
 * always hit the same one), then the MONITOR samples, the server's ceiling and the JMH benchmarks.
 */
final class BenchmarkSuite {

    private static final int READ_PERCENT = 90;

    private static final Duration START_DELAY_ONE_JVM = Duration.ofMillis(20);

    /** Time for the second JVM to read the command and start its threads. */
    private static final Duration START_DELAY_TWO_JVMS = Duration.ofMillis(200);

    private final Settings settings;

    private final Measurements measurements = new Measurements();

    private final Map<String, Contender> contenders = new LinkedHashMap<>();

    /** Per contender, the further independent clients of the several-instances scenarios (the first is above). */
    private final Map<String, List<Contender>> moreInstances = new LinkedHashMap<>();

    private TestRedisServer redisServer;

    private Redis redis;

    private SecondJvm secondJvm;

    private ExclusionCheck localCheck;

    private ExclusionCheck redisCheck;

    BenchmarkSuite(Settings settings) {
        this.settings = settings;
    }

    Measurements run() throws Exception {
        long started = System.nanoTime();
        redisServer = TestRedisServers.start();
        try {
            requireOwnLoopbackServer(redisServer);
            redis = new Redis(redisServer.host(), redisServer.port());
            measurements.machine = Machine.describe(redisServer);
            localCheck = ExclusionCheck.local();
            redisCheck = ExclusionCheck.redis(redis);
            if (settings.scenarios().stream().anyMatch(Scenario::twoJvms)) {
                // it starts its contenders while this JVM starts its own
                startSecondJvm();
            }
            createContenders();
            createMoreInstances();
            if (secondJvm != null) {
                awaitSecondJvm();
            }
            warmUp();
            for (int trial = 1; trial <= settings.trials(); trial++) {
                List<String> order = rotated(runnable(), trial - 1);
                log("trial " + trial + " of " + settings.trials() + ", order " + order);
                for (Scenario scenario : settings.scenarios()) {
                    for (String id : order) {
                        if (applies(scenario, id)) {
                            Duration window = scenario.contended() ? settings.contendedWindow() : settings.uncontendedWindow();
                            measurements.record(scenario, id, runOnce(scenario, id, "t" + trial, window, trial));
                        }
                    }
                }
            }
            sampleWithMonitor();
            measureCeiling();
            if (settings.jmh()) {
                runJmh();
            }
        }
        finally {
            closeAll();
        }
        measurements.runSeconds = (System.nanoTime() - started) / 1e9;
        return measurements;
    }

    /** Load goes only to a server this run started on loopback: never a shared one, never port 6379. */
    private static void requireOwnLoopbackServer(TestRedisServer server) {
        boolean loopback = server.host().equals("127.0.0.1") || server.host().equals("localhost");
        if (!server.controllable() || !loopback || server.port() == 6379) {
            throw new IllegalStateException("The benchmark needs a redis-server of its own on loopback, got "
                    + server.kind() + " at " + server.host() + ":" + server.port()
                    + " (unset " + TestRedisServers.URL_VARIABLE + ")");
        }
    }

    private void createContenders() {
        for (String id : settings.contenders()) {
            log("starting contender " + id);
            try {
                Contender contender = Contenders.start(id, redis);
                contenders.put(id, contender);
                measurements.displayNames.put(id, contender.displayName());
                if (contender.unavailableReason() != null) {
                    measurements.unavailable.put(id, contender.unavailableReason());
                }
            }
            catch (RuntimeException ex) {
                measurements.displayNames.put(id, id);
                measurements.unavailable.put(id, "could not start: " + ex);
                measurements.problems.add("Contender " + id + " could not start: " + ex);
            }
        }
    }

    /** The several-instances scenarios give each contender further clients of its own, as other pods would be. */
    private void createMoreInstances() {
        int instances = settings.scenarios().stream().mapToInt(scenario -> scenario.instancesPerJvm).max().orElse(1);
        if (instances < 2) {
            return;
        }
        for (String id : runnable()) {
            log("starting " + (instances - 1) + " more instances of " + id);
            List<Contender> more = new ArrayList<>();
            moreInstances.put(id, more);
            try {
                for (int i = 1; i < instances; i++) {
                    more.add(Contenders.start(id, redis));
                }
            }
            catch (RuntimeException ex) {
                measurements.unavailableAsSeveralInstances.put(id, "could not start more instances: " + ex);
            }
        }
    }

    private void startSecondJvm() throws Exception {
        log("starting the second JVM");
        secondJvm = SecondJvm.start(BenchmarkMain.class, redis);
        settings.contenders().forEach(secondJvm::prepare);
    }

    private void awaitSecondJvm() throws Exception {
        for (String id : settings.contenders()) {
            String reason = secondJvm.awaitPrepared();
            if (reason != null) {
                measurements.unavailableInSecondJvm.put(id, reason);
            }
        }
        log("second JVM ready");
    }

    private void warmUp() throws Exception {
        if (settings.warmup().isZero()) {
            return;
        }
        log("warming up");
        for (String id : runnable()) {
            for (Scenario scenario : settings.scenarios()) {
                if (applies(scenario, id)) {
                    runOnce(scenario, id, "w", settings.warmup(), 0);
                }
            }
        }
    }

    /** Per-acquisition client commands (MONITOR) for the contended scenarios, in short runs of their own. */
    private void sampleWithMonitor() throws Exception {
        if (settings.monitorWindow().isZero()) {
            return;
        }
        for (Scenario scenario : settings.scenarios()) {
            if (!scenario.contended() || scenario == Scenario.READ_HEAVY) {
                continue;
            }
            for (String id : runnable()) {
                if (!applies(scenario, id)) {
                    continue;
                }
                log("MONITOR sample: scenario " + scenario.number + ", " + id);
                Measurements.Trial trial;
                MonitorSample sample = MonitorSample.start(redis.host(), redis.port());
                try {
                    trial = runOnce(scenario, id, "m", settings.monitorWindow(), 0);
                }
                finally {
                    sample.close();
                }
                measurements.monitor.computeIfAbsent(scenario, s -> new LinkedHashMap<>())
                    .put(id, new Measurements.MonitorResult(trial.result().acquisitions(), sample.clientCommands(),
                            sample.scriptCommands()));
            }
        }
    }

    private void measureCeiling() throws Exception {
        if (settings.ceilingTrials() == 0) {
            return;
        }
        ServerCeiling ceiling = new ServerCeiling(redisServer);
        if (!ceiling.available()) {
            measurements.problems.add("redis-benchmark is not on the PATH: scenario 7 was not measured");
            return;
        }
        log("measuring the server's ceiling with redis-benchmark");
        for (int clients : new int[] { 1, 16 }) {
            int requests = clients == 1 ? 10_000 : 30_000;
            for (ServerCeiling.Probe probe : ceiling.probes()) {
                List<Double> figures = new ArrayList<>();
                for (int trial = 0; trial < settings.ceilingTrials(); trial++) {
                    figures.add(ceiling.requestsPerSecond(probe, clients, requests));
                }
                measurements.ceiling.add(new Measurements.CeilingResult(probe.label(), clients,
                        ceiling.commandLine(probe, clients, requests), figures));
            }
        }
        redisServer.command("FLUSHALL");
    }

    private void runJmh() {
        log("running the JMH benchmarks");
        try {
            measurements.jmh.addAll(JmhRunner.run(redis));
        }
        catch (Exception ex) {
            measurements.problems.add("JMH failed: " + ex);
        }
    }

    private Measurements.Trial runOnce(Scenario scenario, String id, String tag, Duration window, int trial)
            throws Exception {
        Contender contender = contenders.get(id);
        String key = "s" + scenario.number + "-" + tag + "-" + id;
        Workload workload = switch (scenario) {
            case UNCONTENDED_ONE_THREAD, UNCONTENDED_16_THREADS -> Workload.uncontended(scenario.threadsPerInstance, key);
            case READ_HEAVY -> Workload.readHeavy(scenario.threadsPerInstance, key, READ_PERCENT);
            default -> Workload.contended(scenario.threadsPerInstance, key, scenario.criticalSection);
        };
        List<Contender> instances = new ArrayList<>(List.of(contender));
        instances.addAll(moreInstances.getOrDefault(id, List.of()).subList(0, scenario.instancesPerJvm - 1));
        // A local check adds no Redis traffic to what is measured, and keeps an empty section empty; it sees
        // every holder when all of them are in this JVM. Scenarios 3 to 5 keep the Redis check they had.
        boolean twoJvms = scenario.twoJvms();
        boolean checkInRedis = twoJvms || (scenario.contended() && !scenario.spread());
        ExclusionCheck check = checkInRedis ? redisCheck : localCheck;
        Duration delay = twoJvms ? START_DELAY_TWO_JVMS : START_DELAY_ONE_JVM;
        ServerCounters before = ServerCounters.read(redisServer);
        long startAt = System.currentTimeMillis() + delay.toMillis();
        if (twoJvms) {
            secondJvm.startRun(id, workload, startAt, window);
        }
        RunResult result = LoadRun.run(instances, workload, check, startAt, window);
        if (twoJvms) {
            result = result.plus(secondJvm.awaitResult(window.plusSeconds(90)));
        }
        ServerCounters after = ServerCounters.read(redisServer);
        measurements.recordRun(id, result);
        if (result.violations() > 0) {
            measurements.problems.add("MUTUAL EXCLUSION VIOLATED: " + id + " in scenario " + scenario.number + " ("
                    + tag + "): " + result.violations() + " times; " + result.firstProblem());
        }
        if (result.errors() > 0 || result.timeouts() > 0) {
            measurements.problems.add(id + " in scenario " + scenario.number + " (" + tag + "): " + result.errors()
                    + " errors, " + result.timeouts() + " waits ran out; first: " + result.firstProblem());
        }
        log(String.format("  scenario %-2s %-20s %-4s %10.0f %s  p50 %.0f µs  p99 %.0f µs%s%s", scenario.number, id,
                tag, result.perSecond(), scenario.unit, result.waitMicros(0.5), result.waitMicros(0.99),
                scenario.contended() ? String.format("  fewest/most per thread %.2f", result.fewestToMostPerThread()) : "",
                result.violations() > 0 ? "  VIOLATIONS " + result.violations() : ""));
        return new Measurements.Trial(trial, result, after.callsSince(before), after.cpuSecondsSince(before));
    }

    /** Contenders that started and can lock here. */
    private List<String> runnable() {
        return contenders.keySet().stream().filter(id -> !measurements.unavailable.containsKey(id)).toList();
    }

    private boolean applies(Scenario scenario, String id) {
        if (measurements.unavailable.containsKey(id)) {
            return false;
        }
        if (scenario == Scenario.READ_HEAVY && !contenders.get(id).supportsReadWrite()) {
            return false;
        }
        if (scenario.instancesPerJvm > 1 && (measurements.unavailableAsSeveralInstances.containsKey(id)
                || moreInstances.getOrDefault(id, List.of()).size() < scenario.instancesPerJvm - 1)) {
            return false;
        }
        return !scenario.twoJvms() || (secondJvm != null && !measurements.unavailableInSecondJvm.containsKey(id));
    }

    private static List<String> rotated(List<String> ids, int by) {
        List<String> order = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            order.add(ids.get((i + by) % ids.size()));
        }
        return order;
    }

    private void closeAll() {
        if (secondJvm != null) {
            try {
                secondJvm.close();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        List<Contender> all = new ArrayList<>(contenders.values());
        moreInstances.values().forEach(all::addAll);
        for (Contender contender : all) {
            try {
                contender.close();
            }
            catch (RuntimeException ex) {
                measurements.problems.add("Closing " + contender.id() + " failed: " + ex);
            }
        }
        if (redisCheck != null) {
            redisCheck.close();
        }
        redisServer.close();
    }

    private static final long LOADED_AT = System.nanoTime();

    static void log(String message) {
        System.out.printf(java.util.Locale.ROOT, "[bench %6.1f s] %s%n", (System.nanoTime() - LOADED_AT) / 1e9, message);
    }
}
