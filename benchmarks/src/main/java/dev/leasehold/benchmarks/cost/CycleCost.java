package dev.leasehold.benchmarks.cost;

import java.util.Map;
import java.util.TreeMap;

/**
 * What one uncontended lock+unlock cycle cost, over a run: client CPU and allocation (all threads of this JVM),
 * and, on the servers it used, commands executed (those inside scripts included), their time and the server's CPU.
 *
 * @param cyclesPerSecond cycles over the run's wall time
 * @param clientCpuMicros process CPU time of this JVM per cycle, µs
 * @param javaThreadsCpuMicros CPU time of this JVM's Java threads per cycle (without the JIT compiler and GC), µs
 * @param allocatedBytes bytes allocated by every thread of this JVM per cycle
 * @param threadWaits times a thread of this JVM blocked (voluntary context switches) per cycle
 * @param redisCommands commands the servers executed per cycle
 * @param redisCpuMicros the servers' CPU (user + system) per cycle, µs
 * @param commandMicros per command: {calls, µs Redis spent in it} per cycle ({@code INFO commandstats})
 */
public record CycleCost(double cyclesPerSecond, double clientCpuMicros, double javaThreadsCpuMicros, double allocatedBytes, double threadWaits,
        double redisCommands,
        double redisCpuMicros, Map<String, double[]> commandMicros) {

    static CycleCost of(long cycles, double seconds, long cpuNanos, long javaCpuNanos, long allocated, long waits,
            ServerCost server) {
        Map<String, double[]> perCommand = new TreeMap<>();
        server.commands().forEach((command, callsAndMicros) -> perCommand.put(command,
                new double[] { callsAndMicros[0] / (double) cycles, callsAndMicros[1] / (double) cycles }));
        double commands = server.commands().values().stream().mapToLong(value -> value[0]).sum() / (double) cycles;
        return new CycleCost(cycles / seconds, cpuNanos / 1e3 / cycles, javaCpuNanos / 1e3 / cycles, allocated / (double) cycles,
                waits / (double) cycles, commands,
                server.cpuSeconds() * 1e6 / cycles, perCommand);
    }
}
