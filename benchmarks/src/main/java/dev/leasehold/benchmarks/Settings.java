package dev.leasehold.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.leasehold.benchmarks.contenders.Contenders;

/**
 * How long and how much to run. The defaults are the full on-demand run (about five minutes on two cores);
 * {@link #smoke()} is the few-second run of the normal build.
 */
record Settings(int trials, Duration warmup, Duration uncontendedWindow, Duration contendedWindow,
        Duration monitorWindow, int ceilingTrials, boolean jmh, List<String> contenders, Set<Scenario> scenarios,
        Path results) {

    static Settings full() {
        return new Settings(3, Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(3),
                Duration.ofMillis(1500), 3, true, Contenders.IDS, EnumSet.allOf(Scenario.class), null);
    }

    /**
     * Every contender in scenarios 1 to 5 and 8 for a few hundred ms: enough to catch rot, not to measure.
     * Scenario 8 stands for the several-clients scenarios (9 to 11 differ only in numbers), and keeps the
     * smoke test near 20 s.
     */
    static Settings smoke() {
        Set<Scenario> scenarios = EnumSet.range(Scenario.UNCONTENDED_ONE_THREAD, Scenario.READ_HEAVY);
        scenarios.add(Scenario.FOUR_INSTANCES_EMPTY);
        // windows long enough that every thread finishes a cycle even on a loaded 2-core machine
        return new Settings(1, Duration.ZERO, Duration.ofMillis(400), Duration.ofMillis(400), Duration.ZERO, 0, false,
                Contenders.IDS, scenarios, null);
    }

    /** {@code --results=PATH --trials=N --contenders=a,b --scenarios=1,3 --no-jmh --quick} */
    static Settings parse(String[] given) {
        // Maven passes the optional extra arguments as one, possibly empty
        String[] args = String.join(" ", given).trim().split("\\s+");
        if (args.length == 1 && args[0].isEmpty()) {
            args = new String[0];
        }
        Settings settings = full();
        for (String arg : args) {
            if (arg.equals("--quick")) {
                settings = smoke().withResults(settings.results);
            }
        }
        for (String arg : args) {
            String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : "";
            if (arg.startsWith("--results=")) {
                settings = settings.withResults(Path.of(value));
            }
            else if (arg.startsWith("--trials=")) {
                settings = new Settings(Integer.parseInt(value), settings.warmup, settings.uncontendedWindow,
                        settings.contendedWindow, settings.monitorWindow, settings.ceilingTrials, settings.jmh,
                        settings.contenders, settings.scenarios, settings.results);
            }
            else if (arg.startsWith("--contenders=")) {
                settings = new Settings(settings.trials, settings.warmup, settings.uncontendedWindow,
                        settings.contendedWindow, settings.monitorWindow, settings.ceilingTrials, settings.jmh,
                        List.of(value.split(",")), settings.scenarios, settings.results);
            }
            else if (arg.startsWith("--scenarios=")) {
                Set<Scenario> scenarios = EnumSet.noneOf(Scenario.class);
                for (String number : value.split(",")) {
                    scenarios.add(Scenario.byNumber(number));
                }
                settings = new Settings(settings.trials, settings.warmup, settings.uncontendedWindow,
                        settings.contendedWindow, settings.monitorWindow, settings.ceilingTrials, settings.jmh,
                        settings.contenders, scenarios, settings.results);
            }
            else if (arg.equals("--no-jmh")) {
                settings = new Settings(settings.trials, settings.warmup, settings.uncontendedWindow,
                        settings.contendedWindow, settings.monitorWindow, settings.ceilingTrials, false,
                        settings.contenders, settings.scenarios, settings.results);
            }
            else if (!arg.equals("--quick")) {
                throw new IllegalArgumentException("Unknown argument '" + arg + "'");
            }
        }
        return settings;
    }

    Settings withResults(Path path) {
        return new Settings(trials, warmup, uncontendedWindow, contendedWindow, monitorWindow, ceilingTrials, jmh,
                contenders, scenarios, path);
    }

    /** The arguments other than the defaults, to show in the report. */
    List<String> describe() {
        List<String> parts = new ArrayList<>();
        parts.add(trials + " trials");
        parts.add("warm-up " + warmup.toMillis() + " ms per contender and scenario");
        parts.add("windows: uncontended " + uncontendedWindow.toMillis() + " ms, contended " + contendedWindow.toMillis()
                + " ms, MONITOR sample " + monitorWindow.toMillis() + " ms");
        return parts;
    }
}
