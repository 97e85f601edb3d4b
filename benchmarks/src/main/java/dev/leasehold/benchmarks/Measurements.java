package dev.leasehold.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.benchmarks.load.RunResult;

/** Everything one benchmark run measured, for the report. */
final class Measurements {

    /** One contender in one scenario in one trial, with what the server counted meanwhile. */
    record Trial(int trial, RunResult result, Map<String, Long> serverCalls, double serverCpuSeconds) {
    }

    /** A short run watched with MONITOR. */
    record MonitorResult(long acquisitions, Map<String, Long> clientCommands, Map<String, Long> scriptCommands) {
    }

    record CeilingResult(String label, int clients, String commandLine, List<Double> requestsPerSecond) {
    }


    final Map<String, String> displayNames = new LinkedHashMap<>();

    /** Contender id → why it could not run at all. */
    final Map<String, String> unavailable = new LinkedHashMap<>();

    /** Contender id → why it could not run in the second JVM. */
    final Map<String, String> unavailableInSecondJvm = new LinkedHashMap<>();

    /** Contender id → why it could not run as several clients in one JVM (scenarios 8 and 9). */
    final Map<String, String> unavailableAsSeveralInstances = new LinkedHashMap<>();

    final Map<Scenario, Map<String, List<Trial>>> trials = new EnumMap<>(Scenario.class);

    final Map<Scenario, Map<String, MonitorResult>> monitor = new EnumMap<>(Scenario.class);

    /** Every run's result including warm-ups and MONITOR samples, for the exclusion summary. */
    final Map<String, List<RunResult>> allRuns = new LinkedHashMap<>();

    final List<CeilingResult> ceiling = new ArrayList<>();

    final List<dev.leasehold.benchmarks.jmh.JmhRunner.Result> jmh = new ArrayList<>();

    final List<String> problems = new ArrayList<>();

    Machine machine;

    double runSeconds;

    void record(Scenario scenario, String contender, Trial trial) {
        trials.computeIfAbsent(scenario, s -> new LinkedHashMap<>()).computeIfAbsent(contender, c -> new ArrayList<>())
            .add(trial);
    }

    void recordRun(String contender, RunResult result) {
        allRuns.computeIfAbsent(contender, c -> new ArrayList<>()).add(result);
    }

    List<Trial> trials(Scenario scenario, String contender) {
        return trials.getOrDefault(scenario, Map.of()).getOrDefault(contender, List.of());
    }

    long totalViolations() {
        return allRuns.values().stream().flatMap(List::stream).mapToLong(RunResult::violations).sum();
    }

    long violations(String contender) {
        return allRuns.getOrDefault(contender, List.of()).stream().mapToLong(RunResult::violations).sum();
    }
}
