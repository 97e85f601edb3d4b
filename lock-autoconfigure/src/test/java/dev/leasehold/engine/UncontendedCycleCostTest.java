package dev.leasehold.engine;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one uncontended cycle (tryLock, then close, on a key nobody else wants) costs Redis, counted with
 * {@code INFO commandstats} (commands run inside scripts included): a figure that load on the machine cannot
 * move, unlike a time. Pins the command count so that a change that adds a command to the common path fails
 * here; prints the figures (and the client's allocation per cycle, over every thread) for docs/benchmarks.md.
 */
class UncontendedCycleCostTest extends RealRedisEngineTest {

    /** EVALSHA + EXISTS + TIME + SET to acquire, EVALSHA + GET + TIME + DEL to release (9 before quiet grants). */
    static final double MAX_COMMANDS_PER_CYCLE = 8.0;

    // set from outside to count a server's instructions by difference (docs/benchmarks.md)
    private static final int WARM_UP_CYCLES = Integer.getInteger("cycle-cost.warm-up", 2_000);

    private static final int CYCLES = Integer.getInteger("cycle-cost.cycles", 2_000);

    @Test
    void anUncontendedCycleRunsAtMostEightRedisCommandsAndTwoScripts() {
        // a generous Redis timeout: the server may run under a profiler (callgrind), 50 times slower
        DefaultLockEngine engine = fixture.engine(new LockEngineSettings("lock:", Duration.ofSeconds(30),
                Duration.ofSeconds(10), Duration.ofSeconds(2)));
        cycles(engine, WARM_UP_CYCLES, "warm-up");
        TestRedisServer server = redis.server();
        server.command("CONFIG", "RESETSTAT");
        long allocatedBefore = allocatedBytes();
        cycles(engine, CYCLES, "measured");
        long allocated = allocatedBytes() - allocatedBefore;
        Map<String, long[]> stats = commandStats(server);

        long commands = stats.values().stream().mapToLong(calls -> calls[0]).sum();
        long redisMicros = stats.values().stream().mapToLong(calls -> calls[1]).sum();
        long scripts = stats.entrySet().stream()
            .filter(stat -> stat.getKey().equals("evalsha") || stat.getKey().equals("eval"))
            .mapToLong(stat -> stat.getValue()[0]).sum();
        double perCycle = (double) commands / CYCLES;
        StringBuilder report = new StringBuilder();
        report.append(String.format("uncontended cycle: %.2f Redis commands, %.2f scripts, %.1f µs Redis (usec), "
                + "%.0f bytes allocated in the client JVM, per cycle%n", perCycle, (double) scripts / CYCLES,
                (double) redisMicros / CYCLES, (double) allocated / CYCLES));
        stats.forEach((command, calls) -> report.append(String.format("  %-10s %.2f per cycle, %.2f µs per call%n",
                command, (double) calls[0] / CYCLES, calls[0] == 0 ? 0.0 : (double) calls[1] / calls[0])));
        System.out.print(report);

        assertThat((double) scripts / CYCLES).as("scripts per cycle\n" + report).isLessThanOrEqualTo(2.0);
        assertThat(perCycle).as("Redis commands per uncontended cycle, scripts' inner commands included\n" + report)
            .isLessThanOrEqualTo(MAX_COMMANDS_PER_CYCLE);
    }

    private static void cycles(DefaultLockEngine engine, int count, String phase) {
        for (int i = 0; i < count; i++) {
            Optional<LockHandle> handle = engine.tryLock("uncontended", Duration.ZERO, null);
            assertThat(handle).as(phase + " cycle " + i + " on a key nobody else wants").isPresent();
            handle.get().close();
        }
    }

    /** Bytes allocated so far by every live thread of this JVM (Lettuce's I/O threads included). */
    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] ids = threads.getAllThreadIds();
        return Arrays.stream(threads.getThreadAllocatedBytes(ids)).filter(bytes -> bytes > 0).sum();
    }
}
