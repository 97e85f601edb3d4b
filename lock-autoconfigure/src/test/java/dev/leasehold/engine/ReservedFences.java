package dev.leasehold.engine;

import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * The last fencing token Redis has handed out for a key: the end of the block reserved with the holder's
 * grant, recorded in the exclusive lock's value ({@code <token>@<last>}), or the counter key where one was
 * written (a release whose tokens reached past the clock, a reader, quorum mode).
 */
public final class ReservedFences {

    private ReservedFences() {
    }

    public static long lastHandedOut(TestRedisServer redis, LockKeys keys) {
        String value = redis.command("GET", keys.lock());
        int at = value == null ? -1 : Math.max(value.lastIndexOf('@'), value.lastIndexOf('#')); // '#': a quiet grant
        long recorded = at < 0 ? 0 : Long.parseLong(value.substring(at + 1).trim());
        String counter = redis.command("GET", keys.fence());
        long counted = counter == null || counter.equals("null") || counter.isBlank() ? 0 : Long.parseLong(counter.trim());
        return Math.max(recorded, counted);
    }
}
