package dev.leasehold.benchmarks.load;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.LockMode;
import dev.leasehold.benchmarks.contenders.Redis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * Checks inside every critical section that the lock really excluded: one counter per key counts a writer
 * (or exclusive holder) as {@value #WRITER} and a reader as 1, so on entry a writer must see exactly
 * {@value #WRITER} and a reader less than {@value #WRITER}. Entry and exit are one atomic step each.
 */
public abstract sealed class ExclusionCheck implements AutoCloseable {

    static final long WRITER = 1_000_000;

    /** Prefix of the counters in Redis; their INCRBY/DECRBY are left out of the command counts. */
    public static final String REDIS_PREFIX = "bench-inside:";

    private final AtomicLong violations = new AtomicLong();

    private final AtomicReference<String> firstViolation = new AtomicReference<>();

    /** In this JVM only: free, for scenarios where one JVM is the only user of its keys. */
    public static ExclusionCheck local() {
        return new Local();
    }

    /** Through counters in Redis: works across JVMs; costs two commands per critical section. */
    public static ExclusionCheck redis(Redis redis) {
        return new InRedis(redis);
    }

    public final void enter(String key, LockMode mode) {
        long value = add(key, weight(mode));
        boolean excluded = mode == LockMode.READ ? value < WRITER : value == WRITER;
        if (!excluded) {
            violations.incrementAndGet();
            firstViolation.compareAndSet(null, mode + " on '" + key + "' found the inside counter at " + value
                    + " (a writer counts " + WRITER + ", a reader 1)");
        }
    }

    public final void exit(String key, LockMode mode) {
        add(key, -weight(mode));
    }

    /** Forgets earlier runs' violations (runs in one JVM are sequential). */
    public final void reset() {
        violations.set(0);
        firstViolation.set(null);
    }

    public final long violations() {
        return violations.get();
    }

    public final String firstViolation() {
        return firstViolation.get();
    }

    private static long weight(LockMode mode) {
        return mode == LockMode.READ ? 1 : WRITER;
    }

    /** Adds to the key's counter and returns the new value. */
    abstract long add(String key, long delta);

    @Override
    public void close() {
    }

    private static final class Local extends ExclusionCheck {

        private final ConcurrentHashMap<String, AtomicLong> inside = new ConcurrentHashMap<>();

        @Override
        long add(String key, long delta) {
            return inside.computeIfAbsent(key, k -> new AtomicLong()).addAndGet(delta);
        }
    }

    private static final class InRedis extends ExclusionCheck {

        private final RedisClient client;

        private final StatefulRedisConnection<String, String> connection;

        private final RedisCommands<String, String> commands;

        InRedis(Redis redis) {
            this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
            this.connection = client.connect();
            this.commands = connection.sync();
        }

        @Override
        long add(String key, long delta) {
            String counter = REDIS_PREFIX + key;
            return delta >= 0 ? commands.incrby(counter, delta) : commands.decrby(counter, -delta);
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }
}
