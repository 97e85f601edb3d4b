package dev.leasehold.engine.key;

import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.support.EngineClock;

/**
 * The turn of this JVM on a key while an exclusive watchdog lock of it has the key in Redis (one owner token,
 * handed on from thread to thread): the fencing tokens reserved for its hand-offs, how many it made, and whether
 * other instances queue for the key. Guarded by its {@link KeyLine}'s monitor.
 */
final class HandOffTurn {

    private final HandOffRules rules;

    private long nextFence;

    private long lastFence;

    private int handOffs;

    /** Another instance queues for the key: the turn serves only the waiters its gate admits. */
    private boolean othersQueued;

    /** When Redis last said whether other instances queue (the grant, a token reservation). */
    private long checkedAtNanos;

    /** When Redis granted the key to this JVM (the turn began). */
    private long grantedAtNanos;

    HandOffTurn(HandOffRules rules) {
        this.rules = rules;
    }

    /** Redis granted the key: tokens after {@code fencingToken} through {@code reservedThrough} are this turn's. */
    void begin(long fencingToken, long reservedThrough) {
        nextFence = fencingToken + 1;
        lastFence = reservedThrough;
        handOffs = 0;
        othersQueued = false;
        checkedAtNanos = EngineClock.nanoTime();
        grantedAtNanos = checkedAtNanos;
    }

    /** A token reservation answered: the next block, and whether other instances queue now. */
    void reserved(FenceBlock block) {
        checkedAtNanos = EngineClock.nanoTime();
        nextFence = block.first() + 1;
        lastFence = block.last();
        othersQueued |= block.othersQueued();
    }

    boolean allows(HeldLock lock, HeldLock.State before) {
        return rules.allow(lock, before, handOffs);
    }

    /**
     * Whether a waiter that entered at {@code enteredAtNanos} may join the turn. Once another instance queues for
     * the key, the turn is gated: the lock goes only to waiters that came before the grant or within the turn check
     * of it, then back through Redis. So a JVM with more waiters gets a longer turn, and no instance keeps the longer
     * queue: instances with equal shares of the requests wait alike (turns that ended after a fixed number of
     * hand-offs were fair in count but not in time).
     */
    boolean admits(long enteredAtNanos) {
        return !othersQueued || enteredAtNanos - (grantedAtNanos + rules.turnCheckNanos()) < 0;
    }

    /**
     * Whether a release with nobody waiting may wait for a thread to come back: other threads of this JVM took part
     * in this turn (on a busy machine the one that handed the lock on was descheduled by the wake-up of its
     * successor, and is still on its way back), and one coming now may still join the turn.
     */
    boolean mayLinger() {
        return handOffs > 0 && rules.lingerNanos() > 0 && admits(EngineClock.nanoTime());
    }

    long lingerNanos() {
        return rules.lingerNanos();
    }

    /** The lock {@code next} takes over from {@code lock}: same owner token and lease estimate, a token of its own. */
    HeldLock successorOf(HeldLock lock, Waiter next, KeyLine line) {
        // 0: the successor reserves more tokens first, which also tells whether other instances queue: when the
        // block is used up, or when that was last asked more than the turn check ago (long sections)
        boolean checkDue = EngineClock.nanoTime() - checkedAtNanos > rules.turnCheckNanos();
        long fence = nextFence <= lastFence && !checkDue ? nextFence++ : 0;
        handOffs++;
        long sentAt = lock.leaseEndsAtNanos() - lock.validMillis * 1_000_000L; // inherits the lease estimate
        return new HeldLock(lock.keys, next.takeOverMode(), lock.token, fence, next.thread(), true, lock.leaseMillis,
                lock.validMillis, sentAt, true).on(line);
    }
}
