package dev.leasehold.benchmarks.contenders;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The floor: the two round trips any correct lock needs and nothing else. A bare Lettuce client sends
 * {@code SET key token NX PX 30000}, and releases with one {@code EVALSHA} of a compare-and-delete
 * script. When the key is taken it sleeps a jittered back-off (1 ms doubling to 8 ms) and tries again:
 * no pub/sub, no local queue, no watchdog, no fencing token.
 */
public final class FloorContender implements Contender {

    public static final String ID = "floor";

    /** Deletes the key only if it still holds our token. */
    public static final String COMPARE_AND_DELETE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

    private static final long FIRST_BACKOFF_MICROS = 1_000;

    private static final long MAX_BACKOFF_MICROS = 8_000;

    private static final SetArgs ACQUIRE = SetArgs.Builder.nx().px(30_000);

    private final RedisClient client;

    private final StatefulRedisConnection<String, String> connection;

    private final RedisCommands<String, String> commands;

    private final String compareAndDeleteSha;

    public FloorContender(Redis redis) {
        this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        this.connection = client.connect();
        this.commands = connection.sync();
        this.compareAndDeleteSha = commands.scriptLoad(COMPARE_AND_DELETE);
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String displayName() {
        return "Floor: Lettuce SET NX PX + EVALSHA";
    }

    @Override
    public boolean supportsReadWrite() {
        return false;
    }

    @Override
    public boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection)
            throws InterruptedException {
        if (mode == LockMode.READ) {
            throw new UnsupportedOperationException("the floor has no shared lock");
        }
        String token = Long.toHexString(ThreadLocalRandom.current().nextLong())
                + Long.toHexString(ThreadLocalRandom.current().nextLong());
        long deadline = System.nanoTime() + wait.toNanos();
        long backoffMicros = FIRST_BACKOFF_MICROS;
        while (commands.set(key, token, ACQUIRE) == null) {
            if (System.nanoTime() >= deadline) {
                return false;
            }
            // half fixed, half random, so waiters do not retry in lock step
            long sleep = backoffMicros / 2 + ThreadLocalRandom.current().nextLong(backoffMicros / 2 + 1);
            TimeUnit.MICROSECONDS.sleep(sleep);
            backoffMicros = Math.min(backoffMicros * 2, MAX_BACKOFF_MICROS);
        }
        try {
            criticalSection.run();
        }
        finally {
            commands.evalsha(compareAndDeleteSha, ScriptOutputType.INTEGER, new String[] { key }, token);
        }
        return true;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
