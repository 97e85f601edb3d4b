package dev.leasehold.benchmarks.cost;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.leasehold.test.redis.TestRedisServer;

/**
 * The counters of some servers at one moment, summed: per command {calls, µs} from {@code INFO commandstats}
 * (commands run inside scripts included) and the CPU seconds of {@code INFO cpu}. The difference of two is what
 * the servers did between them, without these snapshots' own {@code INFO}.
 */
record ServerCost(Map<String, long[]> commands, double cpuSeconds) {

    private static final Set<String> OWN = Set.of("info", "config");

    static ServerCost read(List<TestRedisServer> servers) {
        Map<String, long[]> commands = new TreeMap<>();
        double cpu = 0;
        for (TestRedisServer server : servers) {
            for (String line : server.command("INFO", "commandstats").split("\r?\n")) {
                // cmdstat_set:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
                if (line.startsWith("cmdstat_")) {
                    String command = line.substring("cmdstat_".length(), line.indexOf(':')).toLowerCase();
                    long[] sum = commands.computeIfAbsent(command, c -> new long[2]);
                    sum[0] += field(line, "calls=");
                    sum[1] += field(line, "usec=");
                }
            }
            for (String line : server.command("INFO", "cpu").split("\r?\n")) {
                if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                    cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        }
        return new ServerCost(commands, cpu);
    }

    ServerCost since(ServerCost before) {
        Map<String, long[]> delta = new TreeMap<>();
        commands.forEach((command, now) -> {
            long[] then = before.commands.getOrDefault(command, new long[2]);
            if (now[0] > then[0] && !OWN.contains(command)) {
                delta.put(command, new long[] { now[0] - then[0], now[1] - then[1] });
            }
        });
        return new ServerCost(delta, cpuSeconds - before.cpuSeconds);
    }

    private static long field(String line, String name) {
        int start = line.indexOf(name) + name.length();
        int end = line.indexOf(',', start);
        return Long.parseLong(line.substring(start, end < 0 ? line.length() : end));
    }
}
