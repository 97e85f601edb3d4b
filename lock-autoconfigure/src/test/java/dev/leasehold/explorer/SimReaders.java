package dev.leasehold.explorer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;

/**
 * The shared-lock scripts on the simulated Redis, step for step as acquire_shared.lua, release_shared.lua and
 * renew_shared.lua, and the readers zset ('{@code :readers}': owner token -> lease end, ms) with its own key expiry as
 * the exclusive scripts read it. A reader is refused while the lock key exists (a writer, a queue grant, a kept
 * release), while a writer-waiting marker stands (unless the reader queued before that writer), and while a writer
 * ('|W') is queued ahead of it; it queues as '|R'. Its fencing token comes from the counter key, which a reader always
 * writes (fence.lua's grantFence, keepsCounter). The last reader out wakes the queue's head. Runs only on the
 * explorer's thread, as {@link SimRedis}.
 */
final class SimReaders {

    private final SimStrings strings;

    private final SimFences fences;

    private final SimQueue queue;

    private final FairQueue settings;

    /** Readers zsets: key -> (owner token -> lease end ms); an empty zset does not exist (Redis deletes it). */
    private final Map<String, Map<String, Long>> zsets = new HashMap<>();

    /** The zsets' own expiries (µs); absent: none (PTTL -1). */
    private final Map<String, Long> expiresAtMicros = new HashMap<>();

    SimReaders(SimStrings strings, SimFences fences, SimQueue queue, FairQueue settings) {
        this.strings = strings;
        this.fences = fences;
        this.queue = queue;
        this.settings = settings;
    }

    void clear() {
        zsets.clear();
        expiresAtMicros.clear();
    }

    void delete(String readersKey) {
        zsets.remove(readersKey);
        expiresAtMicros.remove(readersKey);
    }

    // ---- the zset, as Redis keeps it

    /** The zset if it exists now (an expired one goes when read, as in Redis). */
    private Map<String, Long> zset(String readersKey) {
        Long expiresAt = expiresAtMicros.get(readersKey);
        if (expiresAt != null && expiresAt - strings.micros() <= 0) {
            delete(readersKey);
        }
        Map<String, Long> members = zsets.get(readersKey);
        return members == null || members.isEmpty() ? null : members;
    }

    boolean exists(String readersKey) {
        return zset(readersKey) != null;
    }

    private Long score(String readersKey, String token) {
        Map<String, Long> members = zset(readersKey);
        return members == null ? null : members.get(token);
    }

    void removeUpTo(String readersKey, long nowMs) {
        Map<String, Long> members = zset(readersKey);
        if (members != null) {
            members.values().removeIf(leaseEnd -> leaseEnd <= nowMs);
            forgetIfEmpty(readersKey);
        }
    }

    private boolean remove(String readersKey, String token) {
        Map<String, Long> members = zset(readersKey);
        boolean removed = members != null && members.remove(token) != null;
        forgetIfEmpty(readersKey);
        return removed;
    }

    /** Redis deletes a zset whose last member went (its expiry with it). */
    private void forgetIfEmpty(String readersKey) {
        Map<String, Long> members = zsets.get(readersKey);
        if (members != null && members.isEmpty()) {
            delete(readersKey);
        }
    }

    /** ZCOUNT key min +inf (min inclusive). */
    long countFrom(String readersKey, long minMs) {
        Map<String, Long> members = zset(readersKey);
        return members == null ? 0 : members.values().stream().filter(leaseEnd -> leaseEnd >= minMs).count();
    }

    /** The highest lease end (ZRANGE -1 -1 WITHSCORES), null when none. */
    Long lastLeaseEnd(String readersKey) {
        Map<String, Long> members = zset(readersKey);
        return members == null ? null : members.values().stream().max(Long::compare).orElse(null);
    }

    private long pttl(String readersKey) {
        if (zset(readersKey) == null) {
            return -2;
        }
        Long expiresAt = expiresAtMicros.get(readersKey);
        return expiresAt == null ? -1 : (expiresAt - strings.micros()) / 1000;
    }

    /** ZADD then, when the key would expire sooner, PEXPIRE (the shared scripts' pair). */
    private void add(String readersKey, String token, long leaseEnd, long atLeastMs) {
        zsets.computeIfAbsent(readersKey, k -> new HashMap<>()).put(token, leaseEnd);
        if (pttl(readersKey) < atLeastMs) {
            expiresAtMicros.put(readersKey, strings.micros() + atLeastMs * 1000);
        }
    }

    // ---- the scripts

    /** acquire_shared.lua: {@code granted[0]} the token (and the block's last), or a refusal. */
    Grant acquire(LockKeys keys, String token, long lease, String waiterId, QueueTry queueTry) {
        String member = waiterId + "|R";
        long nowMicros = strings.micros();
        long nowMs = nowMicros / 1000;
        long holderTtl = strings.pttl(keys.lock());
        if (holderTtl != -2) {
            return refuse(keys, member, queueTry, holderTtl < 0 ? lease : holderTtl, true, nowMicros);
        }
        long writerWaiting = strings.pttl(keys.writerWaiting());
        if (writerWaiting != -2) {
            // the mark keeps out readers that came after the waiting writer; one that queued before it goes first
            String writer = strings.get(keys.writerWaiting());
            int readerRank = writer == null ? -1 : queue.rank(keys.queue(), member);
            int writerRank = readerRank < 0 ? -1 : queue.rank(keys.queue(), writer + "|W");
            if (!(readerRank >= 0 && writerRank >= 0 && readerRank < writerRank)) {
                return refuse(keys, member, queueTry, writerWaiting < 0 ? lease : writerWaiting, false, nowMicros);
            }
        }
        if (queue.exists(keys.queue())) {
            queue.prune(keys.queue(), nowMs);
            queue.liveHead(keys, nowMs); // a dead writer at the head keeps nobody out
            // readers share, but not ahead of a writer that queued before them
            List<String> members = queue.members(keys.queue());
            int rank = members.indexOf(member);
            List<String> ahead = rank >= 0 ? members.subList(0, rank) : members;
            if (ahead.stream().anyMatch(waiting -> waiting.endsWith("|W"))) {
                return refuse(keys, member, queueTry, settings.entryMillis(), false, nowMicros);
            }
            queue.dequeue(keys.queue(), member);
        }
        removeUpTo(keys.readers(), nowMs);
        add(keys.readers(), token, nowMs + lease, lease);
        long[] granted = fences.grantFence(keys.fence(), lease, 0, false, 1, true);
        return Grant.granted(granted[0], granted[1]);
    }

    private Grant refuse(LockKeys keys, String member, QueueTry queueTry, long waitMs, boolean held, long nowMicros) {
        if (queueTry.joins()) {
            waitMs = queue.enqueue(keys, member, nowMicros, settings.entryMillis(), waitMs, queueTry == QueueTry.QUEUED);
            // a quiet holder's release would not look at the queue (owner.lua): tell it that someone waits
            String noisy = held ? SimOwners.noisyValue(strings.get(keys.lock())) : null;
            if (noisy != null) {
                strings.setKeepTtl(keys.lock(), noisy);
            }
        }
        return Grant.refused(Math.max(1, waitMs));
    }

    /** A quorum node's wake-up ('broadcast' mode): the key's channel published; null in 'queued' mode. */
    private java.util.function.Consumer<LockKeys> broadcast;

    void broadcast(java.util.function.Consumer<LockKeys> publisher) {
        this.broadcast = publisher;
    }

    /** release_shared.lua ('queued' mode, or 'broadcast' on a quorum node): true when released (1 or 2), false when the token held no read lease. */
    boolean release(LockKeys keys, String token, long keepMs) {
        long nowMs = strings.micros() / 1000;
        if (keepMs > 0) {
            // holdAtLeast: this read lease stays for the time left (no wake-up yet)
            Long leaseEnd = score(keys.readers(), token);
            if (leaseEnd == null || leaseEnd <= nowMs) {
                return false;
            }
            add(keys.readers(), token, nowMs + keepMs, keepMs);
            return true;
        }
        Long leaseEnd = score(keys.readers(), token);
        if (leaseEnd == null) {
            return false;
        }
        remove(keys.readers(), token);
        // a read lease that ran out is not released, though nothing removed it yet; the wake-up still runs
        boolean released = leaseEnd > nowMs;
        if (countFrom(keys.readers(), nowMs) > 0) {
            return released;
        }
        delete(keys.readers());
        if (broadcast != null) {
            broadcast.accept(keys); // a quorum node: the last reader out is published on the key's channel
            return released;
        }
        if (!queue.exists(keys.queue()) || strings.get(keys.lock()) != null) {
            return released;
        }
        queue.wakeHead(keys, nowMs, false, 0);
        return released;
    }

    /** renew_shared.lua: extends this reader's lease only if it is still live. */
    boolean renew(LockKeys keys, String token, long lease) {
        Long leaseEnd = score(keys.readers(), token);
        if (leaseEnd == null) {
            return false;
        }
        long nowMs = strings.micros() / 1000;
        if (leaseEnd <= nowMs) {
            remove(keys.readers(), token);
            return false;
        }
        add(keys.readers(), token, nowMs + lease, lease);
        return true;
    }

    /** The end of the token's read lease (ms, server clock) while it is in the readers zset, else null. */
    Long leaseEnd(LockKeys keys, String token) {
        return score(keys.readers(), token);
    }

    /** When the readers zset itself expires (ms, server clock), null when it does not exist or has no expiry. */
    Long keptUntil(LockKeys keys) {
        Long expiresAt = zset(keys.readers()) == null ? null : expiresAtMicros.get(keys.readers());
        return expiresAt == null ? null : expiresAt / 1000;
    }

    /** Owner tokens whose read lease on the key ends after {@code nowMs}, for the explorer's checks. */
    List<String> holders(LockKeys keys, long nowMs) {
        Map<String, Long> members = zset(keys.readers());
        return members == null ? List.of() : members.entrySet().stream().filter(each -> each.getValue() > nowMs)
            .map(Map.Entry::getKey).sorted().toList();
    }

    /** A deep copy of the readers zsets and their expiries, sorted ({@link SimReplica}). */
    List<Object> copy() {
        java.util.TreeMap<String, java.util.TreeMap<String, Long>> zsetsCopy = new java.util.TreeMap<>();
        zsets.forEach((key, members) -> zsetsCopy.put(key, new java.util.TreeMap<>(members)));
        return List.of(zsetsCopy, new java.util.TreeMap<>(expiresAtMicros));
    }

    /** The readers become {@code copy}'s (a promoted replica's data). */
    @SuppressWarnings("unchecked")
    void restore(List<Object> copy) {
        clear();
        ((Map<String, Map<String, Long>>) copy.get(0)).forEach((key, members) -> zsets.put(key, new HashMap<>(members)));
        expiresAtMicros.putAll((Map<String, Long>) copy.get(1));
    }
}
