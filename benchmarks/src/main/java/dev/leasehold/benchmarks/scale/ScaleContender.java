package dev.leasehold.benchmarks.scale;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.benchmarks.contenders.Redis;

/**
 * One lock library as the Scale part uses it: many locks held at once with a watchdog lease, blocking and
 * asynchronous waits, and the name of the Redis key behind a lock (to count what is still held). One
 * instance is one independent client (its own connections), as one application instance would have.
 * Handles are opaque; a lock taken by {@link #hold} or {@link #tryHold} is released on the thread that took it.
 */
interface ScaleContender extends AutoCloseable {

    List<String> IDS = List.of(LeaseholdScale.ID, RedissonScale.ID, RegistryScale.ID);

    String id();

    /** Takes the lock on {@code key} with the library's watchdog lease (renewed until released); never null. */
    Object hold(String key) throws Exception;

    /** Waits up to {@code wait} for the lock (watchdog lease); null when the wait ran out. */
    Object tryHold(String key, Duration wait) throws Exception;

    /** Releases a lock from {@link #hold} or {@link #tryHold}, on the thread that took it. */
    void release(Object handle) throws Exception;

    /** Waits without a thread; completes with null when the wait ran out. Null when the library has no such call. */
    CompletableFuture<Object> tryHoldAsync(String key, Duration wait, long waiterId);

    /** Whether {@link #tryHoldAsync} works. */
    default boolean waitsAsync() {
        return true;
    }

    /** Releases a lock from {@link #tryHoldAsync}, from any thread. */
    CompletableFuture<Void> releaseAsync(Object handle, long waiterId);

    /** The Redis key that exists while {@code key} is held. */
    String redisKey(String key);

    /** Locks the library itself reported lost (-1 when it reports none). */
    long reportedLost();

    @Override
    void close();

    static ScaleContender create(String id, Redis redis, Duration lease) {
        return switch (id) {
            case LeaseholdScale.ID -> new LeaseholdScale(redis, lease);
            case RedissonScale.ID -> new RedissonScale(redis, lease);
            case RegistryScale.ID -> new RegistryScale(redis, lease);
            default -> throw new IllegalArgumentException("Unknown contender '" + id + "'; known: " + IDS);
        };
    }
}
