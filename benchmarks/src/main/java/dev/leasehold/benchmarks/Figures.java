package dev.leasehold.benchmarks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/** Medians, ratios within a trial, and how figures are written in the report. */
final class Figures {

    private Figures() {
    }

    /** Median over trials of id's metric divided by ref's metric in the same trial. */
    static double trialRatio(Measurements m, Scenario scenario, String id, String ref,
            ToDoubleFunction<Measurements.Trial> metric) {
        Map<Integer, Measurements.Trial> reference = new HashMap<>();
        m.trials(scenario, ref).forEach(trial -> reference.put(trial.trial(), trial));
        List<Double> ratios = new ArrayList<>();
        for (Measurements.Trial trial : m.trials(scenario, id)) {
            Measurements.Trial other = reference.get(trial.trial());
            if (other != null) {
                ratios.add(metric.applyAsDouble(trial) / metric.applyAsDouble(other));
            }
        }
        return medianOf(ratios);
    }

    static double median(List<Measurements.Trial> trials, ToDoubleFunction<Measurements.Trial> metric) {
        return medianOf(trials.stream().map(metric::applyAsDouble).toList());
    }

    static double medianOf(List<Double> values) {
        List<Double> sorted = values.stream().filter(v -> !Double.isNaN(v)).sorted().toList();
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    /** Commands Redis executed in one trial (scripts' calls included), per acquisition. */
    static double commandsPerAcquisition(Measurements.Trial trial) {
        long executed = trial.serverCalls().values().stream().mapToLong(Long::longValue).sum();
        return trial.result().acquisitions() == 0 ? Double.NaN : (double) executed / trial.result().acquisitions();
    }

    /** Commands clients sent during a MONITOR sample (each a round trip), per acquisition. */
    static double roundTrips(Measurements.MonitorResult sample) {
        if (sample == null || sample.acquisitions() == 0) {
            return Double.NaN;
        }
        long sent = sample.clientCommands().values().stream().mapToLong(Long::longValue).sum();
        return (double) sent / sample.acquisitions();
    }

    static String perAcquisition(Map<String, Long> counts, long acquisitions) {
        if (acquisitions == 0) {
            return "";
        }
        return counts.entrySet().stream()
            .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
            .filter(entry -> (double) entry.getValue() / acquisitions >= 0.005)
            .map(entry -> entry.getKey().toUpperCase(Locale.ROOT) + " " + decimal((double) entry.getValue() / acquisitions))
            .collect(Collectors.joining(", "));
    }

    /** Why a contender has no figure in a scenario. */
    static String notRun(Measurements m, Scenario scenario, String id) {
        if (m.unavailable.containsKey(id)) {
            return "n/a (" + m.unavailable.get(id) + ")";
        }
        if (scenario.twoJvms() && m.unavailableInSecondJvm.containsKey(id)) {
            return "n/a (second JVM: " + m.unavailableInSecondJvm.get(id) + ")";
        }
        if (scenario.instancesPerJvm > 1 && m.unavailableAsSeveralInstances.containsKey(id)) {
            return "n/a (" + m.unavailableAsSeveralInstances.get(id) + ")";
        }
        if (scenario == Scenario.READ_HEAVY) {
            return "n/a (no read/write lock)";
        }
        return "n/a";
    }

    /** A row of the Targets table. */
    static String targetRow(String target, String contender, String figure, boolean met, double value) {
        String result = Double.isNaN(value) ? "n/a (not measured)" : met ? "met" : "**NOT MET**";
        return "| " + target + " | " + contender + " | " + figure + " | " + result + " |";
    }

    static String number(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%,.0f", value);
    }

    static String decimal(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%.2f", value);
    }

    static String millis(double micros) {
        return Double.isNaN(micros) ? "n/a" : String.format(Locale.ROOT, "%.2f", micros / 1000);
    }

    static String ratio(double value) {
        return Double.isNaN(value) || Double.isInfinite(value) ? "n/a" : String.format(Locale.ROOT, "%.2fx", value);
    }

    static String percent(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", value * 100);
    }
}
