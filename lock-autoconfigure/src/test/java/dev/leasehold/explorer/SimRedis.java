package dev.leasehold.explorer;

import java.util.HashSet;
import java.util.Set;
import java.util.function.BiConsumer;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.server.QueueTry;

/**
 * One simulated Redis: the lock scripts' semantics on its data, step for step as the {@code .lua} files
 * (acquire_exclusive, release_exclusive, renew_exclusive(_many), reserve_fences, withdraw, is_locked, and the shared
 * ones in {@link SimReaders}): owner tokens
 * in the lock's value ('token@last fencing token', 'token#last' for a quiet grant: nobody queued, so its release
 * does not look at the queue), compare-then-act release and renewal, reserved blocks for hand-offs, a holdAtLeast
 * release that keeps the key in a value no token owns, leases as expiries on the virtual clock. The scripts share
 * their parts as the {@code .lua} files do: the string keys and the server's clock ({@link SimStrings}), fence.lua's
 * clock rule of fencing tokens with the counter key's retention ({@link SimFences}), queue.lua's fair queue in
 * liveness mode with its grants and the instances' liveness keys ({@link SimQueue}), and readers ({@link SimReaders}:
 * the readers zset, acquire_shared, release_shared, renew_shared). The exclusive acquire honours readers as
 * acquire_exclusive.lua does: refused while a live reader holds (expired ones removed first), it sets the
 * writer-waiting marker when asked (the engine asks only where no queue keeps readers out) and queues as '|W';
 * a withdrawal wakes the queue only when no live reader holds. Runs only on the explorer's thread (one command at a
 * time, as Redis). Its data, the server's truth the checks read and their reads of it are {@link SimServerData}'s.
 */
final class SimRedis extends SimServerData {

    /** Owner tokens whose release ran: none of them may hold a key again (a late renewal must not extend it). */
    private final Set<String> released = new HashSet<>();

    private final BiConsumer<String, String> publish;

    /**
     * A quorum node (the scripts' 'count' fencing rule and 'broadcast' wake-up, see {@link #quorumNode}): grants take
     * one token, reservations a block, from a counter; every release is published on the key's channel; no queue.
     */
    private volatile boolean broadcast;

    /** INFO server's run_id: a new one after each restart that lost the data. */
    private int restarts;

    SimRedis(SimWorld world, FairQueue queueSettings, BiConsumer<String, String> publish) {
        super(world, queueSettings, publish);
        this.publish = publish;
    }

    /**
     * Makes this server a quorum node, as the node's scripts run: fencing tokens counted ({@code retainMs} 0: the
     * counter never expires), releases broadcast; {@code clientMicros}: the quorum client's clock (the floor of a
     * token with a retention).
     */
    void quorumNode(long retainMs, java.util.function.LongSupplier clientMicros) {
        broadcast = true;
        fences.counting(retainMs, clientMicros);
        readers.broadcast(keys -> publish.accept(keys.channel(), "1"));
    }

    synchronized String runId() {
        return "run-" + restarts;
    }

    /** raise_fence.lua */
    long raiseFence(LockKeys keys, long atLeast) {
        return fences.raise(keys.fence(), atLeast);
    }

    /** A key's lock and readers lost, as by a failover that lost their writes. */
    void lose(LockKeys keys) {
        strings.dataLostAfterTime();
        strings.remove(keys.lock());
        readers.delete(keys.readers());
    }

    /** Redis restarted without persistence. */
    void flushAll() {
        synchronized (this) {
            restarts++;
        }
        strings.dataLostAfterTime();
        strings.clear();
        queue.clear();
        readers.clear();
    }

    // ---- the scripts

    /** acquire_shared.lua for READ, else acquire_exclusive.lua. */
    Grant acquire(LockKeys keys, boolean shared, String token, long lease, long writerWaitingMs, String waiterId,
            QueueTry queueTry) {
        if (!shared) {
            return acquireExclusive(keys, token, lease, writerWaitingMs, waiterId, queueTry);
        }
        Grant grant = readers.acquire(keys, token, lease, waiterId, queueTry);
        if (grant.granted()) {
            issued.add(new Issued(keys.logicalKey(), grant.fencingToken(), grant.reservedThrough(), world.elapsed()));
        }
        return grant;
    }

    private Grant acquireExclusive(LockKeys keys, String token, long lease, long writerWaitingMs, String waiterId,
            QueueTry queueTry) {
        boolean joinQueue = queueTry.joins();
        if (broadcast && strings.get(keys.lock()) == null && !readers.exists(keys.readers())
                && strings.get(keys.writerWaiting()) == null && !queue.exists(keys.queue())) {
            // a quorum node's uncontended path: the counter moves on, the value in the '@' form (never quiet)
            return grant(keys, token, lease, 0, false, false);
        }
        // a waiter already queued skips the uncontended look (acquire_exclusive.lua): its grant is never quiet
        boolean fastPath = queueTry != QueueTry.QUEUED && strings.get(keys.lock()) == null
                && !readers.exists(keys.readers()) && strings.get(keys.writerWaiting()) == null
                && !queue.exists(keys.queue()) && strings.get(keys.fence()) == null;
        if (fastPath) {
            return grant(keys, token, lease, 0, true);
        }
        String member = waiterId + "|W";
        long nowMicros = strings.micros();
        long nowMs = nowMicros / 1000;
        String holder = strings.get(keys.lock());
        long grantAbove = SimQueue.grantAbove(holder, member);
        if (grantAbove >= 0) {
            // no reader holds it then; a mark that kept readers out while this writer waited has done its job
            if (writerWaitingMs != 0) {
                strings.remove(keys.writerWaiting());
            }
            // the grant took it out of the queue (liveness); it carries the releasing holder's last token, which the
            // counter key is never past: no counter read then
            return grant(keys, token, lease, grantAbove, grantAbove > 0, false);
        }
        if (holder == null) {
            queue.prune(keys.queue(), nowMs); // expired entries go when a head is chosen
        }
        if (holder != null) {
            long ttl = strings.pttl(keys.lock());
            Grant refused = refuse(keys, member, queueTry, Math.max(1, ttl < 0 ? lease : ttl), nowMicros);
            String noisy = joinQueue ? SimOwners.noisyValue(holder) : null;
            if (noisy != null) {
                strings.setKeepTtl(keys.lock(), noisy);
            }
            return refused;
        }
        readers.removeUpTo(keys.readers(), nowMs);
        Long lastReader = readers.lastLeaseEnd(keys.readers());
        if (lastReader != null) {
            // readers hold it: new readers must queue behind this writer (a mark, where no queue keeps them out)
            if (writerWaitingMs > 0) {
                strings.set(keys.writerWaiting(), waiterId, writerWaitingMs);
            }
            return refuse(keys, member, queueTry, lastReader - nowMs, nowMicros);
        }
        strings.remove(keys.writerWaiting());
        String head = queue.liveHead(keys, nowMs);
        if (head != null && !head.equals(member)) {
            // free, and nobody was granted it: the head's turn now
            queue.wakeHead(keys, nowMs, false, 0);
            return refuse(keys, member, queueTry, queueSettings.claimMillis(), nowMicros);
        }
        queue.dequeue(keys.queue(), member);
        return grant(keys, token, lease, 0, false);
    }

    private Grant grant(LockKeys keys, String token, long lease, long above, boolean counterAbsent) {
        return grant(keys, token, lease, above, counterAbsent, counterAbsent);
    }

    private Grant grant(LockKeys keys, String token, long lease, long above, boolean counterUnread, boolean quiet) {
        // a quorum node reserves no block with a grant (its server does not reserve fences): one token
        long[] granted = broadcast ? fences.grantFence(keys.fence(), lease, above, counterUnread, 1, false)
                : fences.grantFence(keys.fence(), lease, above, counterUnread);
        strings.set(keys.lock(), token + (quiet && !broadcast ? "#" : "@") + granted[1], lease);
        issued.add(new Issued(keys.logicalKey(), granted[0], granted[1], world.elapsed()));
        return Grant.granted(granted[0], granted[1]);
    }

    private Grant refuse(LockKeys keys, String member, QueueTry queueTry, long waitMs, long nowMicros) {
        if (queueTry.joins()) {
            waitMs = queue.enqueue(keys, member, nowMicros, queueSettings.entryMillis(), waitMs,
                    queueTry == QueueTry.QUEUED);
        }
        return Grant.refused(Math.max(1, waitMs));
    }

    FenceBlock reserveFences(LockKeys keys, String token, long lease) {
        String value = strings.get(keys.lock());
        Long last = SimOwners.lastFence(value, token);
        if (last == null) {
            return null;
        }
        // above the holder's last token, which no script lets the counter pass while it holds: no counter read
        long[] granted = fences.grantFence(keys.fence(), lease, last, last > 0);
        boolean quiet = SimOwners.quiet(value, token); // nobody queued since the grant: it stays quiet, no queue to look at
        strings.set(keys.lock(), token + (quiet ? "#" : "@") + granted[1], lease);
        issued.add(new Issued(keys.logicalKey(), granted[0], granted[1], world.elapsed()));
        // whether anyone is queued (reserve_fences.lua): a dead or expired head only ends the turn early, and the
        // release that ends it drops that head
        boolean othersQueued = !quiet && queue.exists(keys.queue());
        return new FenceBlock(granted[0], granted[1], othersQueued);
    }

    boolean renew(LockKeys keys, boolean shared, String token, long lease) {
        if (shared) {
            boolean renewed = readers.renew(keys, token, lease);
            if (renewed) {
                extendedAfterRelease(keys, token);
            }
            return renewed;
        }
        if (SimOwners.lastFence(strings.get(keys.lock()), token) != null) {
            extendedAfterRelease(keys, token);
            strings.pexpire(keys.lock(), lease);
            return true;
        }
        return false;
    }

    private void extendedAfterRelease(LockKeys keys, String token) {
        if (released.contains(token)) {
            extendedAfterRelease.add(world.tokenName(token) + " on " + keys.logicalKey() + " at "
                    + world.now() / 1_000_000 + " ms");
        }
    }

    /** release_shared.lua for READ, else release_exclusive.lua. */
    boolean release(LockKeys keys, boolean shared, String token, long keepMs) {
        releasedAt.put(keys.logicalKey(), world.now());
        if (shared) {
            boolean done = readers.release(keys, token, keepMs);
            if (done) {
                released.add(token);
            }
            return done;
        }
        String value = strings.get(keys.lock());
        Long last = SimOwners.lastFence(value, token);
        if (broadcast) {
            return releaseBroadcast(keys, value, last, token, keepMs);
        }
        if (last == null) {
            if (value == null && queue.exists(keys.queue())) {
                // its lease ran out before this release: the queue's head, asleep on that lease, looks again
                queue.wakeHead(keys, strings.micros() / 1000, true, 0);
            }
            return false;
        }
        boolean quiet = SimOwners.quiet(value, token);
        released.add(token);
        long nowMicros = strings.micros();
        if (last > 0 && last >= nowMicros) {
            fences.counterWrite(keys.fence(), Math.max(last, fences.counter(keys.fence())), nowMicros, keepMs + 60000);
        }
        if (keepMs > 0) {
            // holdAtLeast: taken for the time left, in a value no token owns (a late renewal cannot extend it)
            strings.set(keys.lock(), "released:" + strings.get(keys.lock()), keepMs);
        }
        else {
            strings.remove(keys.lock());
        }
        if (quiet || !queue.exists(keys.queue())) {
            return true;
        }
        // with a hold left, the head is only told to look again
        queue.wakeHead(keys, nowMicros / 1000, keepMs > 0, last);
        return true;
    }

    /**
     * release_exclusive.lua on a quorum node ('broadcast'): the owner's key deleted (or kept for a holdAtLeast) and
     * every release published on the key's channel; no counter write (the counter holds every token already).
     */
    private boolean releaseBroadcast(LockKeys keys, String value, Long last, String token, long keepMs) {
        if (last == null) {
            return false;
        }
        released.add(token);
        if (keepMs > 0) {
            strings.set(keys.lock(), "released:" + value, keepMs);
        }
        else {
            strings.remove(keys.lock());
        }
        publish.accept(keys.channel(), "1");
        return true;
    }

    boolean withdraw(LockKeys keys, String waiterId) {
        releasedAt.put(keys.logicalKey(), world.now());
        boolean took = false;
        long nowMs = strings.micros() / 1000;
        if (waiterId.equals(strings.get(keys.writerWaiting()))) {
            strings.remove(keys.writerWaiting());
            took = true;
            if (broadcast) {
                publish.accept(keys.channel(), "1"); // wakes the readers the marker held back
            }
        }
        if (SimQueue.grantAbove(strings.get(keys.lock()), waiterId + "|W") >= 0) {
            strings.remove(keys.lock());
            took = true;
        }
        if (queue.exists(keys.queue()) && (queue.holds(keys.queue(), waiterId + "|W")
                || queue.holds(keys.queue(), waiterId + "|R"))) {
            queue.dequeue(keys.queue(), waiterId + "|W");
            queue.dequeue(keys.queue(), waiterId + "|R");
            took = true;
        }
        if (took && queue.exists(keys.queue())) {
            String holder = strings.get(keys.lock());
            if (holder == null && readers.countFrom(keys.readers(), nowMs + 1) == 0) {
                queue.wakeHead(keys, nowMs, false, 0);
            }
            else if (holder != null && holder.startsWith("released:")) {
                // a holdAtLeast nobody owns ends without a release: the new head is told to look again
                queue.wakeHead(keys, nowMs, true, 0);
            }
        }
        return took;
    }

    /**
     * look.lua: null when the waiter must try (the key free, granted to it, or held quietly, or its entry gone), else
     * refused for the holder's lease, at most as long as its rank allows; writes nothing.
     */
    Grant look(LockKeys keys, String member) {
        String value = strings.get(keys.lock());
        if (value == null || value.startsWith("queue-grant:" + member) || SimOwners.noisyValue(value) != null) {
            return null;
        }
        int rank = queue.rank(keys.queue(), member);
        long ttl = strings.pttl(keys.lock());
        return rank < 0 || ttl < 0 ? null : Grant.refused(Math.max(1, Math.min(ttl,
                queueSettings.refreshMillis() + queueSettings.claimMillis() * rank)));
    }

    /** keep_alive.lua */
    void keepAlive(String livenessKey, long millis) {
        queue.keepAlive(livenessKey, millis);
    }

    boolean isLocked(LockKeys keys) {
        return strings.get(keys.lock()) != null || readers.countFrom(keys.readers(), strings.micros() / 1000 + 1) > 0;
    }
}
