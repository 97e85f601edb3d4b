package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** The Scale part's arguments ({@code -Dbenchmarks.args="..."}); see benchmarks/README.md. */
record ScaleSettings(List<String> parts, List<String> contenders, int trials, int heldLocks, Duration lease,
        int leasePeriods, List<Integer> instanceCounts, double seconds, int waiterKeys, int waitersPerKey,
        Duration waiterHold, int distinctKeys, List<Integer> masters, String results, boolean quick) {

    static ScaleSettings parse(String[] given) {
        // -Dbenchmarks.args="..." arrives as one argument
        String[] args = Arrays.stream(given).flatMap(arg -> Arrays.stream(arg.trim().split("\\s+")))
            .filter(arg -> !arg.isEmpty()).toArray(String[]::new);
        boolean quick = Arrays.asList(args).contains("--quick");
        boolean full = Arrays.asList(args).contains("--full");
        int defaultLocks = quick ? 2_000 : full ? 1_000_000 : 100_000;
        return new ScaleSettings(list(value(args, "--parts=", "held,instances,waiters,keys")),
                list(value(args, "--contenders=", String.join(",", ScaleContender.IDS))),
                Integer.parseInt(value(args, "--trials=", quick ? "1" : "3")),
                Integer.parseInt(value(args, "--locks=", Integer.toString(defaultLocks))),
                Duration.ofMillis(Long.parseLong(value(args, "--lease-ms=", quick ? "1500" : "10000"))),
                Integer.parseInt(value(args, "--lease-periods=", quick ? "1" : "3")),
                list(value(args, "--instances=", quick ? "2,4" : "2,4,8,16")).stream().map(Integer::parseInt).toList(),
                Double.parseDouble(value(args, "--seconds=", quick ? "1" : "5")),
                Integer.parseInt(value(args, "--keys=", quick ? "50" : "1000")),
                Integer.parseInt(value(args, "--waiters-per-key=", "10")),
                Duration.ofMillis(Long.parseLong(value(args, "--waiter-hold-ms=", quick ? "200" : "1000"))),
                Integer.parseInt(value(args, "--distinct-keys=", quick ? "500" : full ? "1000000" : "100000")),
                list(value(args, "--masters=", "3,6")).stream().map(Integer::parseInt).toList(),
                value(args, "--results=", null), quick);
    }

    private static String value(String[] args, String prefix, String fallback) {
        return Arrays.stream(args).filter(arg -> arg.startsWith(prefix)).map(arg -> arg.substring(prefix.length()))
            .reduce((first, last) -> last).orElse(fallback);
    }

    private static List<String> list(String value) {
        return Arrays.stream(value.split(",")).map(String::trim).filter(part -> !part.isEmpty()).toList();
    }
}
