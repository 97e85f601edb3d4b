package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;

/**
 * The simulated Redis's data and what the explorer reads of it, apart from the scripts that write it ({@link SimRedis}
 * extends it): the parts the scripts share (string keys and the server's clock, {@link SimStrings}; fencing counters,
 * {@link SimFences}; the fair queue, {@link SimQueue}; readers, {@link SimReaders}), the server's truth the checks read
 * (tokens issued, renewals after a release, the simulation's own failures, when a key was last released), copies for
 * a replica ({@link SimReplica}), and the reads of the explorer's checks and aims, which write nothing.
 */
class SimServerData {

    final SimWorld world;

    final SimStrings strings;

    final SimFences fences;

    final SimQueue queue;

    final SimReaders readers;

    final FairQueue queueSettings;

    /** Fencing tokens the server handed out on a key: {@code first} to {@code last} (a grant, or a reserved block). */
    record Issued(String key, long first, long last, long atNanos, long sinceNanos) {

        /** Handed out at once (one server): the call began where it was handed out. */
        Issued(String key, long first, long last, long atNanos) {
            this(key, first, last, atNanos, atNanos);
        }
    }

    /** Renewals that extended a lease after its release ran (the key kept a whole lease for nobody). */
    final List<String> extendedAfterRelease = new ArrayList<>();

    /** Every token block issued, in order: the server's truth the checker reads (tokens only go up). */
    final List<Issued> issued = new ArrayList<>();

    /** Commands the simulation itself failed on (its own mistakes: RunCheck reports them). */
    final List<String> failures = new ArrayList<>();

    void failed(String what) {
        failures.add(what);
    }

    /** When a release or a withdraw last ran per key (virtual ns): where {@link FreeKeyWatch} begins to look. */
    final Map<String, Long> releasedAt = new HashMap<>();

    SimServerData(SimWorld world, FairQueue queueSettings, BiConsumer<String, String> publish) {
        this.world = world;
        this.strings = new SimStrings(world);
        this.fences = new SimFences(strings, queueSettings.tokenBlock());
        this.queue = new SimQueue(strings, queueSettings, publish);
        this.readers = new SimReaders(strings, fences, queue, queueSettings);
        this.queueSettings = queueSettings;
    }

    /** The replica of this server ({@link SimReplica}), null when it has none (set before the run). */
    SimReplica replica;

    /** All of the server's data, copied (what a replica holds, {@link SimReplica}); its text compares two copies. */
    record Data(Object strings, List<Object> queue, List<Object> readers) {
    }

    Data copy() {
        return new Data(strings.copy(), queue.copy(), readers.copy());
    }

    @SuppressWarnings("unchecked")
    void restore(Data data) {
        strings.restore((java.util.TreeMap<String, Object>) data.strings());
        queue.restore(data.queue());
        readers.restore(data.readers());
    }

    /** A failover takes time: the promoted server's clock is past the old one's (see {@link SimStrings}). */
    void failoverTookTime() {
        strings.dataLostAfterTime();
    }

    // ---- reads for the explorer's checks

    /** The lock's value now (owner token and last fence, or a queue grant), null when free. */
    String lockValue(LockKeys keys) {
        return strings.get(keys.lock());
    }

    /** Owner tokens whose read lease has not run out now. */
    List<String> liveReaders(LockKeys keys) {
        return readers.holders(keys, strings.micros() / 1000);
    }

    /** The server's clock, ms (leases and entries end on it). */
    long serverMillis() {
        return strings.micros() / 1000;
    }

    /** The server's clock steps ahead by {@code millis} (see {@link SimStrings#stepAhead}). */
    void stepClockAhead(long millis) {
        strings.stepAhead(millis * 1000);
    }

    /** When the token's read lease ends (ms, server clock) while the readers zset still lists it, else null. */
    Long readLeaseEnd(LockKeys keys, String token) {
        return readers.leaseEnd(keys, token);
    }

    /** The latest read lease end listed for the key (ms, server clock), null when none is listed. */
    Long lastReadLeaseEnd(LockKeys keys) {
        return readers.lastLeaseEnd(keys.readers());
    }

    /** When the key's readers zset itself expires (ms, server clock), null when there is none. */
    Long readersKeptUntil(LockKeys keys) {
        return readers.keptUntil(keys);
    }

    long leaseLeftMillis(LockKeys keys) {
        return Math.max(0, strings.pttl(keys.lock()));
    }

    long counter(LockKeys keys) {
        return fences.counter(keys.fence());
    }

    /** Whose turn the key is now, read without writing (see {@link SimQueue#turnOf}). */
    String turnOf(LockKeys keys) {
        // readers holding it: the key is not free (a reader head may share it: the readers' turn, not a stall)
        return liveReaders(keys).isEmpty() ? queue.turnOf(keys) : null;
    }

    /** Whether {@code member} is queued for the key now (its entry not expired), read without writing. */
    boolean queues(LockKeys keys, String member) {
        return queue.queues(keys, member);
    }

    /** Whether {@code member}'s entry would be dropped as dead if its turn came now (see {@link SimQueue#countsAsDead}). */
    boolean countsAsDead(LockKeys keys, String member) {
        return queue.countsAsDead(keys, member);
    }

    /** Queue members of a key now, first come first. */
    List<String> queued(LockKeys keys) {
        return queue.queued(keys);
    }
}
