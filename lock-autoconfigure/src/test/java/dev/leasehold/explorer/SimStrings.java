package dev.leasehold.explorer;

import java.util.HashMap;
import java.util.Map;

/**
 * The simulated Redis's string keys (lock values, fencing counters) with their expiries, and the server's clock: the
 * virtual clock as TIME answers it, a millisecond further ahead after each loss of data (for fencing tokens only, see
 * {@link #dataLostAfterTime}). An expired key goes when it is next read, as in Redis. Runs only on the explorer's
 * thread, as {@link SimRedis}.
 */
final class SimStrings {

    /** The server's clock in µs: the virtual clock on an epoch far from 0, as TIME answers. */
    static final long EPOCH_MICROS = 1_790_000_000_000_000L;

    private record Value(String text, long expiresAtMicros) {
    }

    private final SimWorld world;

    /** Strings (lock values, counters) with their expiries; Long.MAX_VALUE for none. */
    private final Map<String, Value> strings = new HashMap<>();

    /** How far the server's host clock stepped ahead (NTP steps): expiries and TIME alike. */
    private long steppedMicros;

    /** How far TIME went ahead in failovers and restarts (each takes time; no token is reissued). */
    private long timePassedMicros;

    SimStrings(SimWorld world) {
        this.world = world;
    }

    /** TIME, in µs: what scripts take tokens, queue entries and read leases from. */
    long micros() {
        return expiryMicros() + timePassedMicros;
    }

    /** The clock keys expire on: a loss of data moves TIME, not this (see {@link #dataLostAfterTime}). */
    private long expiryMicros() {
        return EPOCH_MICROS + steppedMicros + world.now() / 1000;
    }

    /**
     * A failover or a restart takes time (seconds in practice; one millisecond here): the server's clock is past
     * every token of a block granted just before, as the clock rule of fencing tokens relies on. Only TIME moves:
     * in the world that time passes for the clients too, so the keys that were not lost keep the time they had left
     * by their holders' clocks (when it moved their expiries as well, three keys lost as by a failover ended another
     * key's holdAtLeast 3 ms before its holder's clock said, and the checker, rightly, saw two holders: seed 2000148
     * in a Cluster run).
     */
    void dataLostAfterTime() {
        timePassedMicros += 1000;
    }

    /**
     * The server's clock steps ahead (an NTP step on its host): every expiry, lease and queue entry on it ends that
     * much sooner, as Redis's do.
     */
    void stepAhead(long micros) {
        steppedMicros += micros;
    }

    String get(String key) {
        Value value = strings.get(key);
        if (value != null && value.expiresAtMicros - expiryMicros() <= 0) {
            strings.remove(key);
            return null;
        }
        return value == null ? null : value.text;
    }

    void set(String key, String text, long px) {
        strings.put(key, new Value(text, expiryMicros() + px * 1000));
    }

    /** SET without an expiry (or PERSIST after it): the key lives until it is removed or the data is lost. */
    void setPersistent(String key, String text) {
        strings.put(key, new Value(text, Long.MAX_VALUE));
    }

    /** SET KEEPTTL: a new value, the expiry the key had (the key must be there: read it first). */
    void setKeepTtl(String key, String text) {
        strings.put(key, new Value(text, strings.get(key).expiresAtMicros));
    }

    void pexpire(String key, long px) {
        String text = get(key);
        if (text != null) {
            set(key, text, px);
        }
    }

    long pttl(String key) {
        String text = get(key);
        return text == null ? -2 : (strings.get(key).expiresAtMicros - expiryMicros()) / 1000;
    }

    void remove(String key) {
        strings.remove(key);
    }

    void clear() {
        strings.clear();
    }

    /** A copy of the keys and their expiries, sorted (a replica's copy, {@link SimReplica}); values are immutable. */
    java.util.TreeMap<String, Object> copy() {
        return new java.util.TreeMap<>(strings);
    }

    /** A copied key's value, expired or not. */
    static String text(Object copied) {
        return ((Value) copied).text();
    }

    /** The keys become {@code copy}'s (a promoted replica's data). */
    void restore(java.util.TreeMap<String, Object> copy) {
        strings.clear();
        copy.forEach((key, value) -> strings.put(key, (Value) value));
    }
}
