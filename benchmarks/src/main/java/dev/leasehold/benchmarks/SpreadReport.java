package dev.leasehold.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.benchmarks.contenders.RedissonContender;

import static dev.leasehold.benchmarks.Figures.*;

/**
 * The report's part for the scenarios of issue 14 (8 to 12): one key shared by several independent clients,
 * and a hot key with an empty critical section. Their tables and their rows of the Targets table.
 */
final class SpreadReport {

    private static final String REDISSON = RedissonContender.ID;

    private static final String FLOOR = FloorContender.ID;

    private static final List<Scenario> SEVERAL_CLIENTS = List.of(Scenario.FOUR_INSTANCES_EMPTY,
            Scenario.FOUR_INSTANCES_1MS, Scenario.TWO_JVMS_EMPTY, Scenario.TWO_JVMS_1MS);

    private final Measurements m;

    private final MarkdownOut out;

    SpreadReport(Measurements measurements, MarkdownOut out) {
        this.m = measurements;
        this.out = out;
    }

    void table(Scenario scenario) {
        out.line("## Scenario " + scenario.number + ": " + scenario.title);
        out.line();
        out.line("| contender | acquisitions/s | per trial | vs floor | vs Redisson | p50 wait (ms) | p99 wait (ms) "
                + "| p99 vs floor | p99 vs Redisson | fewest/most per thread | " + shareHeader(scenario)
                + " | Redis commands / acq. | client round trips / acq. |");
        out.line("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (String id : m.displayNames.keySet()) {
            List<Measurements.Trial> trials = m.trials(scenario, id);
            String name = m.displayNames.get(id);
            if (trials.isEmpty()) {
                out.line("| " + name + " | " + notRun(m, scenario, id) + " | | | | | | | | | | | |");
                continue;
            }
            String perTrial = trials.stream().map(t -> number(t.result().perSecond())).collect(Collectors.joining(" / "));
            out.line("| " + name + " | " + number(median(trials, t -> t.result().perSecond())) + " | " + perTrial + " | "
                    + ratio(trialRatio(m, scenario, id, FLOOR, t -> t.result().perSecond())) + " | "
                    + ratio(trialRatio(m, scenario, id, REDISSON, t -> t.result().perSecond())) + " | "
                    + millis(median(trials, t -> t.result().waitMicros(0.5))) + " | "
                    + millis(median(trials, t -> t.result().waitMicros(0.99))) + " | "
                    + ratio(trialRatio(m, scenario, id, FLOOR, t -> t.result().waitMicros(0.99))) + " | "
                    + ratio(trialRatio(m, scenario, id, REDISSON, t -> t.result().waitMicros(0.99))) + " | "
                    + decimal(median(trials, t -> t.result().fewestToMostPerThread())) + " | "
                    + (scenario.severalClients() ? decimal(median(trials, t -> t.result().smallestClientShare())) : "")
                    + " | " + decimal(median(trials, Figures::commandsPerAcquisition)) + " | "
                    + decimal(roundTrips(sample(scenario, id))) + " |");
        }
        out.line();
        out.line(note(scenario));
        out.line();
    }

    private static String shareHeader(Scenario scenario) {
        if (scenario.twoJvms()) {
            return "smaller JVM's share";
        }
        return scenario.severalClients() ? "smallest client's share (even: " + decimal(1.0 / scenario.instancesPerJvm) + ")"
                : "—";
    }

    private static String note(Scenario scenario) {
        String check = scenario.twoJvms()
                ? "Exclusion is checked through counters in Redis (two commands inside every critical section, left "
                        + "out of the command counts), so an \"empty\" section still lasts two round trips."
                : "Exclusion is checked in this JVM (every holder is here), so the critical section adds no Redis "
                        + "traffic.";
        String clients = scenario.twoJvms() ? "Each JVM has one client of the contender with " + scenario.threadsPerInstance
                + " threads." : scenario.instancesPerJvm > 1 ? scenario.instancesPerJvm + " independent clients of the "
                        + "contender (own connections, own engine), " + scenario.threadsPerInstance + " threads each."
                        : "One client, " + scenario.threadsPerInstance + " threads.";
        return clients + " " + check + " Fewest/most: the fewest acquisitions any thread made over the most any thread "
                + "made, all clients together, median of the trials. Redis commands: `INFO commandstats` delta per "
                + "acquisition (calls inside scripts included), median of the trials. Client round trips: commands "
                + "clients sent, from the `MONITOR` sample (scenario 6).";
    }

    // ---- targets -----------------------------------------------------------------------------------------

    /** Rows of the Targets table for one Leasehold contender. */
    void targets(String id, String name) {
        for (Scenario scenario : SEVERAL_CLIENTS) {
            String what = "Several instances (scenario " + scenario.number + ", " + shortTitle(scenario) + ")";
            List<Measurements.Trial> trials = m.trials(scenario, id);
            double rate = median(trials, t -> t.result().perSecond());
            double vsFloor = trialRatio(m, scenario, id, FLOOR, t -> t.result().perSecond());
            out.target(what + ": acquisitions/s ≥ the floor's", name,
                    number(rate) + " /s = " + ratio(vsFloor) + " of the floor's", vsFloor >= 1.0, vsFloor);
            double p99 = median(trials, t -> t.result().waitMicros(0.99));
            for (String peer : List.of(FLOOR, REDISSON)) {
                double p99Peer = median(m.trials(scenario, peer), t -> t.result().waitMicros(0.99));
                double vsPeer = trialRatio(m, scenario, id, peer, t -> t.result().waitMicros(0.99));
                boolean floor = peer.equals(FLOOR);
                out.target(what + ": p99 wait " + (floor ? "≤ the floor's" : "< Redisson's"), name,
                        millis(p99) + " ms vs " + (floor ? "floor " : "Redisson ") + millis(p99Peer) + " ms ("
                                + ratio(vsPeer) + ")", floor ? vsPeer <= 1.0 : vsPeer < 1.0, vsPeer);
            }
            double turns = median(trials, t -> t.result().fewestToMostPerThread());
            out.target(what + ": fewest/most acquisitions per thread ≥ 0.8", name, decimal(turns), turns >= 0.8, turns);
            if (scenario.twoJvms()) {
                double share = median(trials, t -> t.result().smallestClientShare());
                out.target(what + ": the smaller JVM's share of acquisitions ≥ 0.4", name, decimal(share), share >= 0.4, share);
            }
            Scenario reference = scenario.oneClientReference();
            double commands = median(trials, Figures::commandsPerAcquisition);
            double oneClient = median(m.trials(reference, id), Figures::commandsPerAcquisition);
            out.target(what + ": Redis commands per acquisition ≤ one client's (scenario " + reference.number + ")", name,
                    decimal(commands) + " vs " + decimal(oneClient) + " in scenario " + reference.number,
                    commands <= oneClient, commands / oneClient);
        }
        Scenario hot = Scenario.HOT_KEY_EMPTY;
        double vsFloor = trialRatio(m, hot, id, FLOOR, t -> t.result().perSecond());
        double rate = median(m.trials(hot, id), t -> t.result().perSecond());
        out.target("Hot key (scenario 12, one JVM, 8 threads, empty section): acquisitions/s ≥ 2x the floor's", name,
                number(rate) + " /s = " + ratio(vsFloor) + " of the floor's", vsFloor >= 2.0, vsFloor);
        double trips = roundTrips(sample(hot, id));
        out.target("Hot key (scenario 12): ≤ 0.25 client round trips per acquisition", name,
                decimal(trips) + " round trips / acquisition (MONITOR sample)", trips <= 0.25, trips);
    }

    private static String shortTitle(Scenario scenario) {
        String clients = scenario.twoJvms() ? "2 JVMs × " + scenario.threadsPerInstance + " threads"
                : scenario.instancesPerJvm + " clients × " + scenario.threadsPerInstance + " threads";
        return clients + ", " + (scenario.criticalSection.isZero() ? "empty section"
                : scenario.criticalSection.toMillis() + " ms section");
    }

    private Measurements.MonitorResult sample(Scenario scenario, String id) {
        return m.monitor.getOrDefault(scenario, Map.of()).get(id);
    }

}
