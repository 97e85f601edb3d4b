package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;

/**
 * queue.lua and keep_alive.lua on the simulated Redis: the fair queue in liveness mode (one server), step for step.
 * A waiter's entry ('waiter id|W') keeps its place (ZADD NX) and expires (the entry timeout past its wait); the
 * queue keys last as long as their longest entry; each instance's liveness key says it is alive, and a head whose
 * instance is not is dropped (unless its entry expires within the entry timeout anyway). The head is woken with a
 * grant ('queue-grant:member' in the lock's value, the head leaving the queue with it) or, while the key is still
 * held a while (holdAtLeast), only told to look again; reader heads ('|R', every consecutive one from the head up to a
 * writer) are told to come and take their read leases ({@link SimReaders}). Runs only on the
 * explorer's thread, as {@link SimRedis}.
 */
final class SimQueue {

    private final SimStrings strings;

    private final FairQueue settings;

    /** Where PUBLISH goes: (channel, message). */
    private final BiConsumer<String, String> publish;

    /** Queues: member -> arrival µs, in arrival order (ZADD NX keeps a member's place). */
    private final Map<String, LinkedHashMap<String, Long>> queues = new HashMap<>();

    /** Queue entry expiries (ms) per queue, and the expiry of the queue keys themselves. */
    private final Map<String, Map<String, Long>> queueExpiries = new HashMap<>();

    private final Map<String, Long> queueKeyExpiresAtMicros = new HashMap<>();

    /** The instances' liveness keys (queue.lua, liveness mode: one server), name -> expiry µs. */
    private final Map<String, Long> livenessExpiresAtMicros = new HashMap<>();

    SimQueue(SimStrings strings, FairQueue settings, BiConsumer<String, String> publish) {
        this.strings = strings;
        this.settings = settings;
        this.publish = publish;
    }

    /** Redis restarted without persistence. */
    void clear() {
        queues.clear();
        queueExpiries.clear();
        queueKeyExpiresAtMicros.clear();
        livenessExpiresAtMicros.clear();
    }

    boolean exists(String queueKey) {
        Long expiresAt = queueKeyExpiresAtMicros.get(queueKey);
        if (expiresAt != null && expiresAt - strings.micros() <= 0) {
            queues.remove(queueKey);
            queueExpiries.remove(queueKey);
            queueKeyExpiresAtMicros.remove(queueKey);
        }
        LinkedHashMap<String, Long> members = queues.get(queueKey);
        return members != null && !members.isEmpty();
    }

    /** Whether {@code member} has an entry, expired or not (the queue must exist: ask {@link #exists} first). */
    boolean holds(String queueKey, String member) {
        return queues.get(queueKey).containsKey(member);
    }

    void prune(String queueKey, long nowMs) {
        if (!exists(queueKey)) {
            return;
        }
        Map<String, Long> expiries = queueExpiries.get(queueKey);
        expiries.entrySet().removeIf(entry -> {
            if (entry.getValue() <= nowMs) {
                queues.get(queueKey).remove(entry.getKey());
                return true;
            }
            return false;
        });
    }

    /**
     * Liveness mode: the waiter sleeps at most waitMs, the head at most a refresh interval and each entry behind it a
     * claim timeout more; its entry lasts three times that long (the waiter's looks between its tries write nothing)
     * plus the entry timeout, the queue keys at least as long, and its instance's liveness key is
     * written (not by the look of a waiter already queued, whose instance's heartbeat writes it, unless its entry was
     * gone). Returns the wait.
     */
    long enqueue(LockKeys keys, String member, long nowMicros, long entryMs, long waitMs, boolean lookOfQueued) {
        String queueKey = keys.queue();
        exists(queueKey);
        LinkedHashMap<String, Long> members = queues.computeIfAbsent(queueKey, k -> new LinkedHashMap<>());
        boolean joined = members.putIfAbsent(member, nowMicros) == null;
        int rank = new ArrayList<>(members.keySet()).indexOf(member);
        long wait = Math.min(waitMs, settings.refreshMillis() + settings.claimMillis() * rank);
        // a writer's entry: this sleep and the looks' after it (look.lua writes nothing); a reader's: this sleep
        long keepMs = (member.endsWith("|W") ? 3 : 1) * wait + entryMs;
        queueExpiries.computeIfAbsent(queueKey, k -> new HashMap<>()).put(member, nowMicros / 1000 + keepMs);
        Long keyExpiry = queueKeyExpiresAtMicros.get(queueKey);
        if (keyExpiry == null || keyExpiry - strings.micros() < keepMs * 1000) {
            queueKeyExpiresAtMicros.put(queueKey, strings.micros() + 2 * keepMs * 1000); // with slack, as queue.lua
        }
        if (joined || !lookOfQueued) {
            keepAlive(keys.instancePrefix() + instanceOf(member), entryMs);
        }
        return wait;
    }

    /** ZRANGE 0 -1: the queue's members, first come first, expired ones included (no pruning). */
    List<String> members(String queueKey) {
        return exists(queueKey) ? new ArrayList<>(queues.get(queueKey).keySet()) : List.of();
    }

    /** ZRANK: the member's place in the queue (0: its head), -1 when it is not queued. */
    int rank(String queueKey, String member) {
        return exists(queueKey) ? new ArrayList<>(queues.get(queueKey).keySet()).indexOf(member) : -1;
    }

    private static String instanceOf(String member) {
        return member.substring(0, member.length() - 2);
    }

    /** keep_alive.lua */
    void keepAlive(String livenessKey, long millis) {
        livenessExpiresAtMicros.put(livenessKey, strings.micros() + millis * 1000);
    }

    private boolean alive(LockKeys keys, String member) {
        Long expiresAt = livenessExpiresAtMicros.get(keys.instancePrefix() + instanceOf(member));
        return expiresAt != null && expiresAt - strings.micros() > 0;
    }

    /** The first entry whose instance is alive (or whose entry expires within the entry timeout anyway), after dropping those that are not. */
    String liveHead(LockKeys keys, long nowMs) {
        while (true) {
            String head = head(keys.queue());
            if (head == null || !dropsAsDead(keys, head, nowMs)) {
                return head;
            }
            dequeue(keys.queue(), head);
        }
    }

    /** queue.lua's liveHead passes over (and drops) this entry when its turn comes: its instance wrote no liveness key. */
    private boolean dropsAsDead(LockKeys keys, String member, long nowMs) {
        return !alive(keys, member) && queueExpiries.get(keys.queue()).getOrDefault(member, 0L) - nowMs > settings.entryMillis();
    }

    void dequeue(String queueKey, String member) {
        if (queues.containsKey(queueKey)) {
            queues.get(queueKey).remove(member);
            queueExpiries.get(queueKey).remove(member);
        }
    }

    private String head(String queueKey) {
        return exists(queueKey) ? queues.get(queueKey).keySet().iterator().next() : null;
    }

    /**
     * queue.lua's grantedTo: -1 when {@code value} is not a queue grant to {@code member}, else the token its claim starts
     * above without reading the counter key (the releasing holder's last), 0 when the grant carries none.
     */
    static long grantAbove(String value, String member) {
        String prefix = "queue-grant:" + member;
        if (value == null || !value.startsWith(prefix)) {
            return -1;
        }
        if (value.length() == prefix.length()) {
            return 0;
        }
        return value.charAt(prefix.length()) == '@' ? Long.parseLong(value.substring(prefix.length() + 1)) : -1;
    }

    /**
     * {@code lookOnly}: the key is still taken a while (holdAtLeast): the head is only told to look again. {@code
     * grantAbove}: the releasing holder's last token, carried in the grant (0: none).
     */
    void wakeHead(LockKeys keys, long nowMs, boolean lookOnly, long grantAbove) {
        prune(keys.queue(), nowMs);
        String head = liveHead(keys, nowMs);
        if (head == null) {
            return;
        }
        // a writer head alone; reader heads: every consecutive reader from the head (ZRANGE 0 63), up to a writer
        List<String> heads = head.endsWith("|W") ? List.of(head) : members(keys.queue());
        for (int i = 0; i < heads.size() && i < 64; i++) {
            String member = heads.get(i);
            boolean exclusiveHead = member.endsWith("|W");
            if (exclusiveHead && i > 0) {
                break;
            }
            // an exclusive head leaves the queue with its grant; readers are told to come and take their leases
            if (exclusiveHead && !lookOnly) {
                strings.set(keys.lock(), "queue-grant:" + member + (grantAbove > 0 ? "@" + grantAbove : ""),
                        settings.claimMillis());
                dequeue(keys.queue(), member);
            }
            publish.accept(keys.channel() + ":" + instanceOf(member), exclusiveHead ? "g" : "r");
            if (exclusiveHead) {
                break;
            }
        }
    }

    // ---- reads for the explorer's checks

    /**
     * Whose turn the key is now (a waiter id: its instance's), read without writing: the instance a queue grant waits
     * for, else, with the key free, the queue's live head (as the next release or try would choose it); null when the
     * key is held or nobody waits.
     */
    String turnOf(LockKeys keys) {
        String value = strings.get(keys.lock());
        if (value != null) {
            if (!value.startsWith("queue-grant:")) {
                return null;
            }
            return instanceOf(value.substring("queue-grant:".length()).replaceFirst("@\\d+$", ""));
        }
        if (!exists(keys.queue())) {
            return null;
        }
        long nowMs = strings.micros() / 1000;
        Map<String, Long> expiries = queueExpiries.get(keys.queue());
        for (String member : queues.get(keys.queue()).keySet()) {
            if (expiries.getOrDefault(member, 0L) > nowMs && !dropsAsDead(keys, member, nowMs)) {
                return instanceOf(member);
            }
        }
        return null;
    }

    /** Whether {@code member} is queued for the key now (its entry not expired), read without writing. */
    boolean queues(LockKeys keys, String member) {
        Long expiresAt = exists(keys.queue()) ? queueExpiries.get(keys.queue()).get(member) : null;
        return expiresAt != null && expiresAt > strings.micros() / 1000;
    }

    /**
     * Whether {@code member}'s entry (not expired) would be dropped as dead if its turn came now, read without writing
     * ({@link QueueLivenessWatch}).
     */
    boolean countsAsDead(LockKeys keys, String member) {
        long nowMs = strings.micros() / 1000;
        return queues(keys, member) && dropsAsDead(keys, member, nowMs);
    }

    /** Queue members of a key now, first come first. */
    List<String> queued(LockKeys keys) {
        prune(keys.queue(), strings.micros() / 1000);
        return exists(keys.queue()) ? new ArrayList<>(queues.get(keys.queue()).keySet()) : List.of();
    }

    /** A deep copy of the queues and liveness keys, sorted where order means nothing ({@link SimReplica}). */
    List<Object> copy() {
        java.util.TreeMap<String, LinkedHashMap<String, Long>> queuesCopy = new java.util.TreeMap<>();
        queues.forEach((key, members) -> queuesCopy.put(key, new LinkedHashMap<>(members)));
        java.util.TreeMap<String, java.util.TreeMap<String, Long>> expiriesCopy = new java.util.TreeMap<>();
        queueExpiries.forEach((key, members) -> expiriesCopy.put(key, new java.util.TreeMap<>(members)));
        return List.of(queuesCopy, expiriesCopy, new java.util.TreeMap<>(queueKeyExpiresAtMicros),
                new java.util.TreeMap<>(livenessExpiresAtMicros));
    }

    /** The queues become {@code copy}'s (a promoted replica's data). */
    @SuppressWarnings("unchecked")
    void restore(List<Object> copy) {
        clear();
        ((Map<String, LinkedHashMap<String, Long>>) copy.get(0))
            .forEach((key, members) -> queues.put(key, new LinkedHashMap<>(members)));
        ((Map<String, Map<String, Long>>) copy.get(1))
            .forEach((key, members) -> queueExpiries.put(key, new HashMap<>(members)));
        queueKeyExpiresAtMicros.putAll((Map<String, Long>) copy.get(2));
        livenessExpiresAtMicros.putAll((Map<String, Long>) copy.get(3));
    }
}
