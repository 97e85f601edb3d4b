package dev.leasehold.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.leasehold.benchmarks.contenders.AnnotatedLeaseholdContender;
import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.benchmarks.contenders.LeaseholdContender;
import dev.leasehold.benchmarks.contenders.RedissonContender;
import dev.leasehold.benchmarks.load.RunResult;

import static dev.leasehold.benchmarks.Figures.*;

/** Renders {@link Measurements} as RESULTS.md. */
final class Report {

    static final String COMMAND = "./mvnw -B -pl benchmarks -am verify -Pbenchmarks -DskipTests";

    private static final String REDISSON = RedissonContender.ID;

    private static final String FLOOR = FloorContender.ID;

    private static final List<String> LEASEHOLD = List.of(LeaseholdContender.ID, AnnotatedLeaseholdContender.ID);

    private final Measurements m;

    private final Settings settings;

    private final MarkdownOut out = new MarkdownOut();

    private final SpreadReport spread;

    private final JmhSection jmhSection;

    Report(Measurements measurements, Settings settings) {
        this.m = measurements;
        this.settings = settings;
        this.spread = new SpreadReport(measurements, out);
        this.jmhSection = new JmhSection(measurements, settings, out);
    }

    String render() {
        out.line("# Leasehold benchmarks");
        out.line();
        out.line("Written by `" + COMMAND + "` (see `benchmarks/README.md`). Every figure is the **median of "
                + settings.trials() + " trials**; in each trial the contenders take turns, in an order that rotates "
                + "from trial to trial. Ratios are taken within each trial (same minute, same machine load) and their "
                + "median is shown. This is a shared 2-core machine: read the ratios, not the absolute figures.");
        out.line();
        for (Map.Entry<String, String> fact : m.machine.facts().entrySet()) {
            out.line("- **" + fact.getKey() + "**: " + fact.getValue());
        }
        out.line("- **Run**: " + String.join("; ", settings.describe()) + "; the benchmark itself took "
                + Math.round(m.runSeconds) + " s (plus the Maven build)");
        out.line();
        exclusionBanner();
        targets();
        contenders();
        for (Scenario scenario : settings.scenarios()) {
            if (scenario.spread()) {
                spread.table(scenario);
            }
            else {
                scenarioTable(scenario);
            }
        }
        costPerAcquisition();
        ceiling();
        jmhSection.table();
        exclusion();
        problems();
        method();
        return out.toString();
    }

    private void exclusionBanner() {
        long violations = m.totalViolations();
        if (violations > 0) {
            out.line("> **MUTUAL EXCLUSION WAS VIOLATED " + violations + " TIMES IN THIS RUN.** See \"Mutual exclusion\" "
                    + "below. The run exited non-zero.");
        }
        else {
            out.line("> Mutual exclusion held in every run of every contender (" + m.allRuns.values().stream()
                .mapToInt(List::size).sum() + " runs, warm-ups and samples included).");
        }
        out.line();
    }

    private void contenders() {
        out.line("## Contenders");
        out.line();
        out.line("| id | contender | status |");
        out.line("|---|---|---|");
        m.displayNames.forEach((id, name) -> {
            String status = m.unavailable.containsKey(id) ? "n/a (" + m.unavailable.get(id) + ")"
                    : m.unavailableInSecondJvm.containsKey(id) ? "second JVM: n/a (" + m.unavailableInSecondJvm.get(id) + ")"
                    : "ran";
            out.line("| `" + id + "` | " + name + " | " + status + " |");
        });
        out.line();
    }

    // ---- scenario tables -------------------------------------------------------------------------------

    private void scenarioTable(Scenario scenario) {
        out.line("## Scenario " + scenario.number + ": " + scenario.title);
        out.line();
        boolean contended = scenario.contended();
        if (contended) {
            out.line("| contender | acquisitions/s | per trial | vs Redisson | vs floor | p50 wait (ms) | p99 wait (ms) | p50 vs Redisson |");
            out.line("|---|---:|---|---:|---:|---:|---:|---:|");
        }
        else {
            out.line("| contender | cycles/s | per trial | vs Redisson | vs floor | share of the server's ceiling |");
            out.line("|---|---:|---|---:|---:|---:|");
        }
        double ceiling = cycleCeiling(scenario == Scenario.UNCONTENDED_ONE_THREAD ? 1 : 16);
        for (String id : m.displayNames.keySet()) {
            List<Measurements.Trial> trials = m.trials(scenario, id);
            String name = m.displayNames.get(id);
            if (trials.isEmpty()) {
                out.line("| " + name + " | " + notRun(m, scenario, id) + " | | | | " + (contended ? " | | |" : "|"));
                continue;
            }
            double rate = median(trials, t -> t.result().perSecond());
            String perTrial = trials.stream().map(t -> number(t.result().perSecond())).collect(Collectors.joining(" / "));
            String row = "| " + name + " | " + number(rate) + " | " + perTrial + " | "
                    + ratio(trialRatio(m, scenario, id, REDISSON, t -> t.result().perSecond())) + " | "
                    + ratio(trialRatio(m, scenario, id, FLOOR, t -> t.result().perSecond())) + " | ";
            if (contended) {
                row += millis(median(trials, t -> t.result().waitMicros(0.5))) + " | "
                        + millis(median(trials, t -> t.result().waitMicros(0.99))) + " | "
                        + ratio(trialRatio(m, scenario, id, REDISSON, t -> t.result().waitMicros(0.5))) + " |";
            }
            else {
                row += (Double.isNaN(ceiling) ? "n/a" : percent(rate / ceiling)) + " |";
            }
            out.line(row);
        }
        out.line();
        if (!contended && !Double.isNaN(ceiling)) {
            out.line("Server ceiling for one SET NX PX plus one EVALSHA per cycle, from scenario 7 with "
                    + (scenario == Scenario.UNCONTENDED_ONE_THREAD ? "1 client" : "16 clients") + ": "
                    + number(ceiling) + " cycles/s.");
            out.line();
        }
    }

    // ---- scenario 6 --------------------------------------------------------------------------------------

    private void costPerAcquisition() {
        List<Scenario> contended = settings.scenarios().stream()
            .filter(scenario -> scenario.contended() && scenario != Scenario.READ_HEAVY)
            .toList();
        out.line("## Scenario 6: cost per successful acquisition in the contended scenarios ("
                + contended.stream().map(scenario -> scenario.number).collect(Collectors.joining(", ")) + ")");
        out.line();
        out.line("Client round trips come from a " + settings.monitorWindow().toMillis() + " ms run of its own watched with "
                + "`MONITOR` (commands from a client address; script-internal calls show as `[0 lua]` and are not "
                + "round trips; pushed pub/sub messages do not show at all, SUBSCRIBE/UNSUBSCRIBE do and count). "
                + "Commands executed by Redis are `INFO commandstats` deltas over the timed trials (they include the "
                + "calls inside scripts), pooled over all trials. Redis CPU is the `INFO cpu` delta "
                + "(used_cpu_user + used_cpu_sys) per acquisition, median of the trials; in scenarios 3, 4, 10 "
                + "and 11 it includes the exclusion check's two commands per acquisition (the same for every "
                + "contender; the other scenarios check in the JVM). The benchmark's own "
                + "commands (the exclusion check's INCRBY/DECRBY, INFO) are left out of the command counts.");
        out.line();
        for (Scenario scenario : contended) {
            out.line("### Scenario " + scenario.number);
            out.line();
            out.line("| contender | client round trips / acq. | sent by clients (per acq.) | run inside scripts (per acq.) | Redis commands executed / acq. | executed, by command (per acq.) | Redis CPU µs / acq. |");
            out.line("|---|---:|---|---|---:|---|---:|");
            for (String id : m.displayNames.keySet()) {
                List<Measurements.Trial> trials = m.trials(scenario, id);
                String name = m.displayNames.get(id);
                if (trials.isEmpty()) {
                    out.line("| " + name + " | " + notRun(m, scenario, id) + " | | | | | |");
                    continue;
                }
                Measurements.MonitorResult sample = m.monitor.getOrDefault(scenario, Map.of()).get(id);
                String trips = "n/a";
                String sent = "";
                String scripted = "";
                if (sample != null && sample.acquisitions() > 0) {
                    trips = decimal(roundTrips(sample));
                    sent = perAcquisition(sample.clientCommands(), sample.acquisitions());
                    scripted = perAcquisition(sample.scriptCommands(), sample.acquisitions());
                }
                Map<String, Long> executed = new TreeMap<>();
                long acquisitions = 0;
                for (Measurements.Trial trial : trials) {
                    trial.serverCalls().forEach((command, calls) -> executed.merge(command, calls, Long::sum));
                    acquisitions += trial.result().acquisitions();
                }
                long totalExecuted = executed.values().stream().mapToLong(Long::longValue).sum();
                double cpuMicros = median(trials, t -> t.result().acquisitions() == 0 ? Double.NaN
                        : t.serverCpuSeconds() * 1e6 / t.result().acquisitions());
                out.line("| " + name + " | " + trips + " | " + sent + " | " + scripted + " | "
                        + (acquisitions == 0 ? "n/a" : decimal((double) totalExecuted / acquisitions)) + " | "
                        + perAcquisition(executed, acquisitions) + " | " + decimal(cpuMicros) + " |");
            }
            out.line();
        }
    }

    // ---- scenario 7 --------------------------------------------------------------------------------------

    private void ceiling() {
        out.line("## Scenario 7: the server's own ceiling (`redis-benchmark`)");
        out.line();
        if (m.ceiling.isEmpty()) {
            out.line("Not measured in this run.");
            out.line();
            return;
        }
        out.line("The same server, the commands a lock needs, median of " + settings.ceilingTrials() + " runs each. "
                + "The compare-and-delete EVALSHA mostly finds no key here (random keys), so it is a lower bound of "
                + "its cost. Scenarios 1 and 2 show their figures as a share of the lock-cycle ceiling "
                + "1 / (1/SET + 1/EVALSHA) with 1 and 16 clients.");
        out.line();
        out.line("| command | clients | requests/s | command line |");
        out.line("|---|---:|---:|---|");
        for (Measurements.CeilingResult result : m.ceiling) {
            out.line("| " + result.label() + " | " + result.clients() + " | " + number(medianOf(result.requestsPerSecond()))
                    + " | `" + result.commandLine() + "` |");
        }
        out.line();
        out.line("Lock-cycle ceiling (SET NX PX + EVALSHA): " + number(cycleCeiling(1)) + " cycles/s with 1 client, "
                + number(cycleCeiling(16)) + " cycles/s with 16 clients.");
        out.line();
    }

    private double cycleCeiling(int clients) {
        double set = Double.NaN;
        double evalsha = Double.NaN;
        for (Measurements.CeilingResult result : m.ceiling) {
            if (result.clients() == clients && result.label().startsWith("SET")) {
                set = medianOf(result.requestsPerSecond());
            }
            if (result.clients() == clients && result.label().startsWith("EVALSHA")) {
                evalsha = medianOf(result.requestsPerSecond());
            }
        }
        return 1 / (1 / set + 1 / evalsha);
    }

    // ---- JMH, exclusion, problems ------------------------------------------------------------------------

    private void exclusion() {
        out.line("## Mutual exclusion");
        out.line();
        out.line("Every critical section checks that the lock excluded: in the contended scenarios through a counter "
                + "per key in Redis (a writer adds " + "1,000,000 and must find exactly that, a reader adds 1 and must "
                + "find less), so the two JVMs check each other; in the uncontended ones with the same counter kept "
                + "in the JVM.");
        out.line();
        out.line("| contender | runs | acquisitions checked | violations |");
        out.line("|---|---:|---:|---:|");
        m.allRuns.forEach((id, runs) -> out.line("| " + m.displayNames.get(id) + " | " + runs.size() + " | "
                + number(runs.stream().mapToLong(RunResult::acquisitions).sum()) + " | "
                + (m.violations(id) > 0 ? "**" + m.violations(id) + "**" : "0") + " |"));
        out.line();
    }

    private void problems() {
        if (m.problems.isEmpty()) {
            return;
        }
        out.line("## Problems");
        out.line();
        m.problems.forEach(problem -> out.line("- " + problem.replace("|", "\\|")));
        out.line();
    }

    private void method() {
        out.line("## Method");
        out.line();
        out.line("- One `redis-server` started by the run on a free loopback port (no persistence), stopped at the end.");
        out.line("- Each contender is one client, built the way an application would: Leasehold's engine with the "
                + "starter's defaults (watchdog lease 30 s); a Spring Boot application with the Leasehold starter "
                + "and a bean whose methods carry `@DistributedLock(name = \"bench\", key = \"#key\")`; Redisson "
                + "`getLock`/`getReadWriteLock` with `tryLock(wait)` (watchdog lease); `RedisLockRegistry` with a "
                + "30 s expiry in each of its two modes; and the floor (`SET key token NX PX 30000`, then `EVALSHA` "
                + "of a compare-and-delete script; when the key is taken it sleeps 0.5 to 1x a back-off doubling "
                + "from 1 ms to 8 ms, then tries again).");
        out.line("- Uncontended: every thread locks its own key and releases at once. Contended: every thread locks "
                + "the same key, holds it 1 ms (plus the exclusion check's two commands), releases, and asks again "
                + "at once. The wait is measured from asking to being granted. Scenario 4 adds a second JVM "
                + "(same java binary and class path) with another 8 threads and its own client; both JVMs start at "
                + "the same wall-clock instant and their counts and waits are merged.");
        out.line("- Scenarios 8 to 12 (issue 14): scenarios 8 and 9 give each contender four independent clients in "
                + "this JVM (own connections and, for Leasehold, own engine, as four pods would have), 2 threads "
                + "each; 10 and 11 run 4 threads in each of the two JVMs; 12 is one client with 8 threads. An empty "
                + "critical section releases at once. Fewest/most per thread and the smallest client's (JVM's) "
                + "share are taken within each trial over every thread of every client, then the median.");
        out.line("- Only acquisitions granted inside the window count; throughput is counted acquisitions / window.");
        out.line("- Reading the waits: Leasehold queues the threads of one JVM that want the same key first come, first "
                + "served, so with 8 threads each waits for about 7 critical sections (p50 and p99 close together). "
                + "Redisson, RedisLockRegistry (a non-fair local `ReentrantLock`) and the floor let a thread that "
                + "just released, or happens to retry at the right moment, take the lock again: a low p50 and a long "
                + "p99 tail.");
        out.line("- Warm-up: each contender runs each scenario for " + settings.warmup().toMillis()
                + " ms before the trials, after one lock at start-up.");
        out.line();
    }

    // ---- targets -----------------------------------------------------------------------------------------

    private void targets() {
        out.line("## Targets");
        out.line();
        out.line("| target | contender | figure | result |");
        out.line("|---|---|---|---|");
        for (String id : LEASEHOLD) {
            if (!m.displayNames.containsKey(id)) {
                continue;
            }
            String name = m.displayNames.get(id);
            if (m.unavailable.containsKey(id)) {
                out.line("| all targets | " + name + " | | n/a (" + m.unavailable.get(id) + ") |");
                continue;
            }
            for (Scenario scenario : List.of(Scenario.UNCONTENDED_ONE_THREAD, Scenario.UNCONTENDED_16_THREADS)) {
                String what = scenario == Scenario.UNCONTENDED_ONE_THREAD ? "1 thread" : "16 threads";
                double vsRedisson = trialRatio(m, scenario, id, REDISSON, t -> t.result().perSecond());
                double vsFloor = trialRatio(m, scenario, id, FLOOR, t -> t.result().perSecond());
                double rate = median(m.trials(scenario, id), t -> t.result().perSecond());
                out.target("Uncontended throughput, " + what + ", ≥ Redisson's", name,
                        number(rate) + " cycles/s = " + ratio(vsRedisson) + " of Redisson's", vsRedisson >= 1.0, vsRedisson);
                out.target("Uncontended throughput, " + what + ", ≥ 90% of the floor's", name,
                        number(rate) + " cycles/s = " + percent(vsFloor) + " of the floor's", vsFloor >= 0.9, vsFloor);
            }
            for (Scenario scenario : List.of(Scenario.CONTENDED_ONE_JVM, Scenario.CONTENDED_TWO_JVMS)) {
                String what = "scenario " + scenario.number;
                Measurements.MonitorResult sample = m.monitor.getOrDefault(scenario, Map.of()).get(id);
                double trips = sample == null || sample.acquisitions() == 0 ? Double.NaN : roundTrips(sample);
                out.target("Contended (" + what + "): ≤ 3 client round trips per acquisition", name,
                        decimal(trips) + " round trips / acquisition", trips <= 3.0, trips);
                double vsFloor = trialRatio(m, scenario, id, FLOOR, t -> t.result().perSecond());
                double rate = median(m.trials(scenario, id), t -> t.result().perSecond());
                out.target("Contended (" + what + "): acquisitions/s ≥ the floor's", name,
                        number(rate) + " /s = " + ratio(vsFloor) + " of the floor's", vsFloor >= 1.0, vsFloor);
                double p50 = median(m.trials(scenario, id), t -> t.result().waitMicros(0.5));
                double p50Redisson = median(m.trials(scenario, REDISSON), t -> t.result().waitMicros(0.5));
                double p50VsRedisson = trialRatio(m, scenario, id, REDISSON, t -> t.result().waitMicros(0.5));
                out.target("Contended (" + what + "): p50 wait ≤ Redisson's", name,
                        millis(p50) + " ms vs Redisson " + millis(p50Redisson) + " ms (" + ratio(p50VsRedisson) + ")",
                        p50VsRedisson <= 1.0, p50VsRedisson);
            }
            spread.targets(id, name);
        }
        jmhSection.interceptionTarget();
        long violations = m.totalViolations();
        out.line("| Mutual exclusion verified in every run | every contender | " + violations + " violations in "
                + m.allRuns.values().stream().mapToInt(List::size).sum() + " runs | "
                + (violations == 0 ? "met" : "**NOT MET**") + " |");
        out.line();
    }

}
