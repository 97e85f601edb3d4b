package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.FenceBlock;

/**
 * The data of one simulated Redis and the exclusive-lock scripts' semantics on it, step for step as the
 * {@code .lua} files (acquire_exclusive, fence, release_exclusive, renew_exclusive(_many), reserve_fences,
 * withdraw, queue, is_locked): owner tokens in the lock's value ('token@last fencing token', 'token#last' for a quiet
 * grant: nobody queued, so its release does not look at the queue), compare-then-act
 * release and renewal, the clock rule of fencing tokens with the counter key's retention (lease + 60 s after its
 * last write), reserved blocks for hand-offs, the fair queue in liveness mode (one server) with its grants
 * ('queue-grant:member', the head leaving the queue with it), the entries' expiry and the instances' liveness keys,
 * leases as expiries on the virtual clock. Readers (READ mode) are not simulated.
 * Runs only on the explorer's thread (one command at a time, as Redis).
 */
final class SimRedis {

    /** The server's clock in µs: the virtual clock on an epoch far from 0, as TIME answers. */
    private static final long EPOCH_MICROS = 1_790_000_000_000_000L;

    private record Value(String text, long expiresAtMicros) {
    }

    final SimWorld world;

    private final FairQueue queue;

    private final int tokenBlock;

    /** Strings (lock values, counters) with their expiries; Long.MAX_VALUE for none. */
    private final Map<String, Value> strings = new HashMap<>();

    /** Queues: member -> arrival µs, in arrival order (ZADD NX keeps a member's place). */
    private final Map<String, LinkedHashMap<String, Long>> queues = new HashMap<>();

    /** Queue entry expiries (ms) per queue, and the expiry of the queue keys themselves. */
    private final Map<String, Map<String, Long>> queueExpiries = new HashMap<>();

    private final Map<String, Long> queueKeyExpiresAtMicros = new HashMap<>();

    /** The instances' liveness keys (queue.lua, liveness mode: one server), name -> expiry µs. */
    private final Map<String, Long> livenessExpiresAtMicros = new HashMap<>();

    /** Where PUBLISH goes: (channel, message). */
    private final BiConsumer<String, String> publish;

    /** Fencing tokens the server handed out on a key: {@code first} to {@code last} (a grant, or a reserved block). */
    record Issued(String key, long first, long last, long atNanos) {
    }

    /** Owner tokens whose release ran: none of them may hold a key again (a late renewal must not extend it). */
    private final java.util.Set<String> released = new java.util.HashSet<>();

    /** Renewals that extended a lease after its release ran (the key kept a whole lease for nobody). */
    final List<String> extendedAfterRelease = new ArrayList<>();

    /** Every token block issued, in order: the server's truth the checker reads (tokens only go up). */
    final List<Issued> issued = new ArrayList<>();

    /** When a release or a withdraw last ran per key (virtual ns): where {@link FreeKeyWatch} begins to look. */
    final Map<String, Long> releasedAt = new HashMap<>();

    SimRedis(SimWorld world, FairQueue queue, BiConsumer<String, String> publish) {
        this.world = world;
        this.queue = queue;
        this.tokenBlock = queue.tokenBlock();
        this.publish = publish;
    }

    /** How far ahead the server's clock went in failovers and restarts (each takes time; no token is reissued). */
    private long jumpedMicros;

    long micros() {
        return EPOCH_MICROS + jumpedMicros + world.now() / 1000;
    }

    /**
     * A failover or a restart takes time (seconds in practice; one millisecond here): the server's clock is past
     * every token of a block granted just before, as the clock rule of fencing tokens relies on.
     */
    private void dataLostAfterTime() {
        jumpedMicros += 1000;
    }

    // ---- strings with expiry

    private String get(String key) {
        Value value = strings.get(key);
        if (value != null && value.expiresAtMicros - micros() <= 0) {
            strings.remove(key);
            return null;
        }
        return value == null ? null : value.text;
    }

    private void set(String key, String text, long px) {
        strings.put(key, new Value(text, micros() + px * 1000));
    }

    private void pexpire(String key, long px) {
        String text = get(key);
        if (text != null) {
            set(key, text, px);
        }
    }

    private long pttl(String key) {
        String text = get(key);
        return text == null ? -2 : (strings.get(key).expiresAtMicros - micros()) / 1000;
    }

    /** The owner's value, as Redis holds it (tests: a key lost as by a failover). */
    void delete(String key) {
        dataLostAfterTime();
        strings.remove(key);
    }

    /** Redis restarted without persistence. */
    void flushAll() {
        dataLostAfterTime();
        strings.clear();
        queues.clear();
        queueExpiries.clear();
        queueKeyExpiresAtMicros.clear();
        livenessExpiresAtMicros.clear();
    }

    // ---- owner.lua

    private static Long ownersLastFence(String value, String token) {
        if (value == null || !value.startsWith(token)) {
            return null;
        }
        if (value.length() == token.length()) {
            return 0L;
        }
        if (value.charAt(token.length()) != '@' && value.charAt(token.length()) != '#') {
            return null;
        }
        return Long.parseLong(value.substring(token.length() + 1));
    }

    /** A quiet grant's value ('token#last'): nobody queued, so its release need not look at the queue. */
    private static boolean quiet(String value, String token) {
        return value.length() > token.length() && value.charAt(token.length()) == '#';
    }

    /** owner.lua's noisyValue: a quiet grant's value in the '@' form, or null. */
    private static String noisyValue(String value) {
        int at = value == null ? -1 : value.lastIndexOf('#');
        return at < 0 || !value.substring(at + 1).matches("\\d+") ? null
                : value.substring(0, at) + "@" + value.substring(at + 1);
    }

    // ---- fence.lua (clock rule)

    /** The counter key lives as long as it is ahead of the clock, plus {@code retainMs}. */
    private void counterWrite(String fenceKey, long last, long nowMicros, long retainMs) {
        long aheadMs = Math.max(0, Math.floorDiv(last - nowMicros + 999, 1000));
        set(fenceKey, Long.toString(last), retainMs + aheadMs);
    }

    private long[] grantFence(String fenceKey, long lease, long above, boolean counterAbsent) {
        long now = micros();
        long fence = Math.max(now, above + 1);
        if (!counterAbsent) {
            String counter = get(fenceKey);
            fence = Math.max(fence, (counter == null ? 0 : Long.parseLong(counter)) + 1);
        }
        // the block ends at most a block ahead of the clock: tokens never outrun it
        long last = Math.max(fence, now + tokenBlock - 1);
        if (last >= now + lease * 1000 - 1000) {
            counterWrite(fenceKey, last, now, lease + 60000);
        }
        return new long[] { fence, last };
    }

    // ---- queue.lua

    private boolean queueExists(String queueKey) {
        Long expiresAt = queueKeyExpiresAtMicros.get(queueKey);
        if (expiresAt != null && expiresAt - micros() <= 0) {
            queues.remove(queueKey);
            queueExpiries.remove(queueKey);
            queueKeyExpiresAtMicros.remove(queueKey);
        }
        LinkedHashMap<String, Long> members = queues.get(queueKey);
        return members != null && !members.isEmpty();
    }

    private void pruneQueue(String queueKey, long nowMs) {
        if (!queueExists(queueKey)) {
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
     * claim timeout more; its entry
     * lasts that long plus the entry timeout, the queue keys at least as long, and its instance's liveness key is
     * written. Returns the wait.
     */
    private long enqueue(LockKeys keys, String member, long nowMicros, long entryMs, long waitMs) {
        String queueKey = keys.queue();
        queueExists(queueKey);
        LinkedHashMap<String, Long> members = queues.computeIfAbsent(queueKey, k -> new LinkedHashMap<>());
        members.putIfAbsent(member, nowMicros);
        int rank = new ArrayList<>(members.keySet()).indexOf(member);
        long wait = Math.min(waitMs, queue.refreshMillis() + queue.claimMillis() * rank);
        long keepMs = wait + entryMs;
        queueExpiries.computeIfAbsent(queueKey, k -> new HashMap<>()).put(member, nowMicros / 1000 + keepMs);
        Long keyExpiry = queueKeyExpiresAtMicros.get(queueKey);
        if (keyExpiry == null || keyExpiry - micros() < keepMs * 1000) {
            queueKeyExpiresAtMicros.put(queueKey, micros() + keepMs * 1000);
        }
        keepAlive(keys.instancePrefix() + instanceOf(member), entryMs);
        return wait;
    }

    private static String instanceOf(String member) {
        return member.substring(0, member.length() - 2);
    }

    /** keep_alive.lua */
    void keepAlive(String livenessKey, long millis) {
        livenessExpiresAtMicros.put(livenessKey, micros() + millis * 1000);
    }

    private boolean alive(LockKeys keys, String member) {
        Long expiresAt = livenessExpiresAtMicros.get(keys.instancePrefix() + instanceOf(member));
        return expiresAt != null && expiresAt - micros() > 0;
    }

    /** The first entry whose instance is alive (or whose entry expires within the entry timeout anyway), after dropping those that are not. */
    private String liveHead(LockKeys keys, long nowMs) {
        while (true) {
            String head = head(keys.queue());
            if (head == null || alive(keys, head)
                    || queueExpiries.get(keys.queue()).getOrDefault(head, 0L) - nowMs <= queue.entryMillis()) {
                return head;
            }
            dequeue(keys.queue(), head);
        }
    }

    private void dequeue(String queueKey, String member) {
        if (queues.containsKey(queueKey)) {
            queues.get(queueKey).remove(member);
            queueExpiries.get(queueKey).remove(member);
        }
    }

    private String head(String queueKey) {
        return queueExists(queueKey) ? queues.get(queueKey).keySet().iterator().next() : null;
    }

    /** {@code lookOnly}: the key is still taken a while (holdAtLeast): the head is only told to look again. */
    private void wakeQueueHead(LockKeys keys, long nowMs, boolean lookOnly) {
        pruneQueue(keys.queue(), nowMs);
        String head = liveHead(keys, nowMs);
        if (head == null) {
            return;
        }
        // no readers: the head is a writer (exclusive); it leaves the queue with its grant
        if (!lookOnly) {
            set(keys.lock(), "queue-grant:" + head, queue.claimMillis());
            dequeue(keys.queue(), head);
        }
        publish.accept(keys.channel() + ":" + head.substring(0, head.length() - 2), "g");
    }

    // ---- the scripts

    Grant acquire(LockKeys keys, String token, long lease, String waiterId, boolean joinQueue) {
        boolean fastPath = get(keys.lock()) == null && !queueExists(keys.queue()) && get(keys.fence()) == null;
        if (fastPath) {
            return grant(keys, token, lease, 0, true);
        }
        String member = waiterId + "|W";
        long nowMicros = micros();
        long nowMs = nowMicros / 1000;
        String holder = get(keys.lock());
        if (holder != null && holder.equals("queue-grant:" + member)) {
            return grant(keys, token, lease, 0, false); // the grant took it out of the queue (liveness)
        }
        if (holder == null) {
            pruneQueue(keys.queue(), nowMs); // expired entries go when a head is chosen
        }
        if (holder != null) {
            long ttl = pttl(keys.lock());
            Grant refused = refuse(keys, member, joinQueue, Math.max(1, ttl < 0 ? lease : ttl), nowMicros);
            String noisy = joinQueue ? noisyValue(holder) : null;
            if (noisy != null) {
                strings.put(keys.lock(), new Value(noisy, strings.get(keys.lock()).expiresAtMicros));
            }
            return refused;
        }
        String head = liveHead(keys, nowMs);
        if (head != null && !head.equals(member)) {
            // free, and nobody was granted it: the head's turn now
            wakeQueueHead(keys, nowMs, false);
            return refuse(keys, member, joinQueue, queue.claimMillis(), nowMicros);
        }
        dequeue(keys.queue(), member);
        return grant(keys, token, lease, 0, false);
    }

    private Grant grant(LockKeys keys, String token, long lease, long above, boolean counterAbsent) {
        long[] granted = grantFence(keys.fence(), lease, above, counterAbsent);
        boolean quiet = counterAbsent;
        set(keys.lock(), token + (quiet ? "#" : "@") + granted[1], lease);
        issued.add(new Issued(keys.logicalKey(), granted[0], granted[1], world.elapsed()));
        return Grant.granted(granted[0], granted[1]);
    }

    private Grant refuse(LockKeys keys, String member, boolean joinQueue, long waitMs, long nowMicros) {
        if (joinQueue) {
            waitMs = enqueue(keys, member, nowMicros, queue.entryMillis(), waitMs);
        }
        return Grant.refused(Math.max(1, waitMs));
    }

    FenceBlock reserveFences(LockKeys keys, String token, long lease) {
        Long last = ownersLastFence(get(keys.lock()), token);
        if (last == null) {
            return null;
        }
        long[] granted = grantFence(keys.fence(), lease, last, false);
        set(keys.lock(), token + "@" + granted[1], lease);
        issued.add(new Issued(keys.logicalKey(), granted[0], granted[1], world.elapsed()));
        boolean othersQueued = false;
        if (queueExists(keys.queue())) {
            pruneQueue(keys.queue(), micros() / 1000);
            othersQueued = liveHead(keys, micros() / 1000) != null;
        }
        return new FenceBlock(granted[0], granted[1], othersQueued);
    }

    boolean renew(LockKeys keys, String token, long lease) {
        if (ownersLastFence(get(keys.lock()), token) != null) {
            if (released.contains(token)) {
                extendedAfterRelease.add(world.tokenName(token) + " on " + keys.logicalKey() + " at "
                        + world.now() / 1_000_000 + " ms");
            }
            pexpire(keys.lock(), lease);
            return true;
        }
        return false;
    }

    boolean release(LockKeys keys, String token, long keepMs) {
        releasedAt.put(keys.logicalKey(), world.now());
        String value = get(keys.lock());
        Long last = ownersLastFence(value, token);
        if (last == null) {
            if (value == null && queueExists(keys.queue())) {
                // its lease ran out before this release: the queue's head, asleep on that lease, looks again
                wakeQueueHead(keys, micros() / 1000, true);
            }
            return false;
        }
        boolean quiet = quiet(value, token);
        released.add(token);
        long nowMicros = micros();
        if (last > 0 && last >= nowMicros) {
            String counter = get(keys.fence());
            counterWrite(keys.fence(), Math.max(last, counter == null ? 0 : Long.parseLong(counter)), nowMicros,
                    keepMs + 60000);
        }
        if (keepMs > 0) {
            // holdAtLeast: taken for the time left, in a value no token owns (a late renewal cannot extend it)
            set(keys.lock(), "released:" + get(keys.lock()), keepMs);
        }
        else {
            strings.remove(keys.lock());
        }
        if (quiet || !queueExists(keys.queue())) {
            return true;
        }
        // with a hold left, the head is only told to look again
        wakeQueueHead(keys, nowMicros / 1000, keepMs > 0);
        return true;
    }

    boolean withdraw(LockKeys keys, String waiterId) {
        releasedAt.put(keys.logicalKey(), world.now());
        boolean took = false;
        long nowMs = micros() / 1000;
        if (waiterId.equals(get(keys.writerWaiting()))) {
            strings.remove(keys.writerWaiting());
            took = true;
        }
        if (("queue-grant:" + waiterId + "|W").equals(get(keys.lock()))) {
            strings.remove(keys.lock());
            took = true;
        }
        if (queueExists(keys.queue()) && (queues.get(keys.queue()).containsKey(waiterId + "|W")
                || queues.get(keys.queue()).containsKey(waiterId + "|R"))) {
            dequeue(keys.queue(), waiterId + "|W");
            dequeue(keys.queue(), waiterId + "|R");
            took = true;
        }
        if (took && queueExists(keys.queue())) {
            String holder = get(keys.lock());
            if (holder == null) {
                wakeQueueHead(keys, nowMs, false);
            }
            else if (holder.startsWith("released:")) {
                // a holdAtLeast nobody owns ends without a release: the new head is told to look again
                wakeQueueHead(keys, nowMs, true);
            }
        }
        return took;
    }

    boolean isLocked(LockKeys keys) {
        return get(keys.lock()) != null;
    }

    /** The lock's value now (owner token and last fence, or a queue grant), null when free. */
    String lockValue(LockKeys keys) {
        return get(keys.lock());
    }

    long leaseLeftMillis(LockKeys keys) {
        return Math.max(0, pttl(keys.lock()));
    }

    long counter(LockKeys keys) {
        String counter = get(keys.fence());
        return counter == null ? 0 : Long.parseLong(counter);
    }

    /**
     * Whose turn the key is now (a waiter id: its instance's), read without writing: the instance a queue grant waits
     * for, else, with the key free, the queue's live head (as the next release or try would choose it); null when the
     * key is held or nobody waits.
     */
    String turnOf(LockKeys keys) {
        String value = get(keys.lock());
        if (value != null) {
            return value.startsWith("queue-grant:") ? instanceOf(value.substring("queue-grant:".length())) : null;
        }
        if (!queueExists(keys.queue())) {
            return null;
        }
        long nowMs = micros() / 1000;
        Map<String, Long> expiries = queueExpiries.get(keys.queue());
        for (String member : queues.get(keys.queue()).keySet()) {
            long expiresAt = expiries.getOrDefault(member, 0L);
            if (expiresAt > nowMs && (alive(keys, member) || expiresAt - nowMs <= queue.entryMillis())) {
                return instanceOf(member);
            }
        }
        return null;
    }

    /** Whether {@code member} is queued for the key now (its entry not expired), read without writing. */
    boolean queues(LockKeys keys, String member) {
        Long expiresAt = queueExists(keys.queue()) ? queueExpiries.get(keys.queue()).get(member) : null;
        return expiresAt != null && expiresAt > micros() / 1000;
    }

    /** Queue members of a key now, first come first. */
    List<String> queued(LockKeys keys) {
        pruneQueue(keys.queue(), micros() / 1000);
        return queueExists(keys.queue()) ? new ArrayList<>(queues.get(keys.queue()).keySet()) : List.of();
    }
}
