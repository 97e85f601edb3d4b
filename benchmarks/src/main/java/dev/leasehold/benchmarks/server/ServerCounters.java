package dev.leasehold.benchmarks.server;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.leasehold.test.redis.TestRedisServer;

/**
 * The server's own counters at one moment: calls per command from {@code INFO commandstats} (which counts
 * commands run inside scripts too) and CPU seconds from {@code INFO cpu}. Two snapshots give what a run
 * cost the server.
 */
public record ServerCounters(Map<String, Long> calls, double cpuSeconds) {

    /**
     * The benchmark's own commands, left out of every count: the exclusion check's counters, and these
     * snapshots themselves.
     */
    public static final Set<String> BOOKKEEPING = Set.of("incrby", "decrby", "info", "config", "monitor");

    public static ServerCounters read(TestRedisServer redis) {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            // cmdstat_set:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
            if (line.startsWith("cmdstat_")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':')).toLowerCase();
                String callsField = line.substring(line.indexOf("calls=") + "calls=".length());
                calls.put(command, Long.parseLong(callsField.substring(0, callsField.indexOf(','))));
            }
        }
        double cpu = 0;
        for (String line : redis.command("INFO", "cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return new ServerCounters(calls, cpu);
    }

    /** Calls per command since {@code before}, without the benchmark's bookkeeping. */
    public Map<String, Long> callsSince(ServerCounters before) {
        Map<String, Long> delta = new TreeMap<>();
        calls.forEach((command, count) -> {
            long since = count - before.calls.getOrDefault(command, 0L);
            if (since > 0 && !BOOKKEEPING.contains(command)) {
                delta.put(command, since);
            }
        });
        return delta;
    }

    public double cpuSecondsSince(ServerCounters before) {
        return cpuSeconds - before.cpuSeconds;
    }
}
