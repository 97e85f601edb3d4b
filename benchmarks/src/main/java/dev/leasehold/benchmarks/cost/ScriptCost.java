package dev.leasehold.benchmarks.cost;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.engine.redis.ScriptSource;
import dev.leasehold.test.redis.TestRedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;

/**
 * What the steps of the acquire and release scripts cost Redis, without the network: cycles are pipelined (100
 * at a time on one connection), so the server's CPU per cycle is the commands' and the scripts' own work. Each
 * variant leaves out one more step of the uncontended path, so the differences say what each step costs.
 */
final class ScriptCost {

    private static final int CYCLES = 20_000;

    private static final int BATCH = 100;

    private static final String TOKEN = "host-1234567890:12345:AbCdEf:0123456789abcdefghijkl";

    private static final String WAITER = "host-1234567890:12345:AbCdEf";

    /** The queue's settings argument (queue.lua's queueSettings), as ScriptedLockServer makes it on one server. */
    private static final String SETTINGS = "3000 3000 1000 plain lock:instance:";

    private record Variant(String acquire, String release, boolean fullArguments) {
    }

    private ScriptCost() {
    }

    /** Markdown: Redis CPU per cycle and µs per script call of each variant (median of three runs). */
    static String measure(TestRedisServer server) {
        String fence = ScriptSource.withQueue("acquire_exclusive");
        Map<String, Variant> variants = new LinkedHashMap<>();
        variants.put("floor: SET NX PX, then compare-and-delete script", null);
        variants.put("two empty scripts, 1 key 1 argument each", new Variant("return 1", "return 1", false));
        variants.put("two empty scripts with Leasehold's keys and arguments (6+8, 4+4)",
                new Variant("return 1", "return 1", true));
        variants.put("acquire: EXISTS + SET NX PX (no fencing token); release: GET, TIME, DEL, EXISTS",
                new Variant("if redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[5]) == 0 and redis.call('SET', KEYS[1], "
                        + "ARGV[1], 'NX', 'PX', tonumber(ARGV[2])) then return {1, 1, 1} end return {0, 1}",
                        ScriptSource.withQueue("release_exclusive"), true));
        variants.put("Leasehold's scripts (acquire adds TIME + GET: the fencing token, kept in the lock's value)",
                new Variant(fence, ScriptSource.withQueue("release_exclusive"), true));
        RedisClient client = RedisClient.create(RedisURI.create(server.host(), server.port()));
        StringBuilder out = new StringBuilder("| variant (one lock + unlock) | Redis CPU µs/cycle | script µs/call |\n"
                + "|---|---:|---:|\n");
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            for (var variant : variants.entrySet()) {
                List<double[]> runs = new ArrayList<>();
                for (int run = 0; run < 3; run++) {
                    runs.add(run(server, connection, variant.getValue()));
                }
                runs.sort((a, b) -> Double.compare(a[0], b[0]));
                double[] median = runs.get(1);
                out.append(String.format("| %s | %.1f | %.1f |%n", variant.getKey(), median[0], median[1]));
            }
        }
        finally {
            client.shutdown();
        }
        return out.toString();
    }

    /** The lock ({@code unlock} false) or unlock step of one cycle on the key {@code base}. */
    private static RedisFuture<?> step(RedisAsyncCommands<String, String> commands, Variant variant, String acquire,
            String release, String base, boolean unlock) {
        String[] keys = { base, base + ":readers", base + ":writer-waiting", base + ":fence", base + ":queue",
            base + ":queue-expiry" };
        if (variant == null) {
            return unlock ? commands.evalsha(release, ScriptOutputType.INTEGER, new String[] { base }, TOKEN)
                    : commands.set(base, TOKEN, SetArgs.Builder.nx().px(30_000));
        }
        if (variant.fullArguments) {
            return unlock ? commands.evalsha(release, ScriptOutputType.INTEGER,
                    new String[] { keys[0], keys[4], keys[5], keys[3] }, TOKEN, "0 queued", SETTINGS, base + ":released")
                    : commands.evalsha(acquire, ScriptOutputType.MULTI, keys, TOKEN, "30000", "clock", "16", "0 0", WAITER,
                            SETTINGS, base + ":released");
        }
        return commands.evalsha(unlock ? release : acquire, ScriptOutputType.INTEGER, new String[] { base }, TOKEN);
    }

    /** {Redis CPU µs per cycle, µs per EVALSHA} of {@link #CYCLES} pipelined cycles. */
    private static double[] run(TestRedisServer server, StatefulRedisConnection<String, String> connection,
            Variant variant) {
        RedisAsyncCommands<String, String> commands = connection.async();
        String acquire = variant != null ? connection.sync().scriptLoad(variant.acquire) : null;
        String release = connection.sync().scriptLoad(variant != null ? variant.release : FloorContender.COMPARE_AND_DELETE);
        String run = Long.toString(System.nanoTime(), 36);
        ServerCost before = ServerCost.read(List.of(server));
        connection.setAutoFlushCommands(false);
        try {
            for (int start = 0; start < CYCLES; start += BATCH) {
                // a batch locks BATCH keys, then unlocks them: a lock is held while the rest of the batch runs (as a
                // client holds it at least for the grant's round trip), not released by the very next script
                List<RedisFuture<?>> replies = new ArrayList<>();
                for (int unlock = 0; unlock < 2; unlock++) {
                    for (int i = start; i < start + BATCH; i++) {
                        replies.add(step(commands, variant, acquire, release, "cost:{" + run + "-" + (i - start) + "}",
                                unlock == 1));
                    }
                }
                connection.flushCommands();
                for (RedisFuture<?> reply : replies) {
                    reply.get(10, TimeUnit.SECONDS);
                }
            }
        }
        catch (Exception ex) {
            throw new IllegalStateException("a pipelined cycle failed", ex);
        }
        finally {
            connection.setAutoFlushCommands(true);
        }
        ServerCost cost = ServerCost.read(List.of(server)).since(before);
        long[] evalsha = cost.commands().getOrDefault("evalsha", new long[2]);
        return new double[] { cost.cpuSeconds() * 1e6 / CYCLES, evalsha[0] == 0 ? 0 : evalsha[1] / (double) evalsha[0] };
    }
}
