package dev.leasehold.engine;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.LockMode;

/** The state of one acquisition in this JVM, shared by the handles of its re-entries. */
final class HeldLock {

    enum State {
        HELD, RELEASED, LOST
    }

    final LockKeys keys;

    final LockMode mode;

    final String token;

    /** Set once before the lock is handed to its owner (a hand-off may reserve it after the turn passed). */
    volatile long fencingToken;

    /**
     * The turn this JVM holds the key in Redis for (exclusive watchdog locks on servers that reserve fencing
     * tokens), passed from holder to holder by local hand-offs; null when the lock is never handed off.
     */
    final Turn turn;

    /** The lock this one was handed to, same token in Redis: a lease found lost later is its successor's. */
    volatile HeldLock successor;

    /** The thread it is re-entrant for; null for a lock taken asynchronously (bound to no thread). */
    final Thread owner;

    /** True when the watchdog renews the lease; false for a fixed lease. */
    final boolean renewed;

    final long leaseMillis;

    /** How long after a confirmed acquire or renewal was sent the lease counts as held ({@link LockServer#validMillis}). */
    final long validMillis;

    final long acquiredAtNanos;

    final LocalGates.Gate gate;

    /** Open handles of this acquisition; changed only while holding this object's monitor (see Reentrancy). */
    final AtomicInteger holds = new AtomicInteger(1);

    /** Open handles that still tie this lock to its owner thread for re-entrancy (not detached); ditto. */
    final AtomicInteger threadBoundHolds = new AtomicInteger(1);

    final AtomicReference<State> state = new AtomicReference<>(State.HELD);

    private final java.util.concurrent.atomic.AtomicBoolean gateOpened = new java.util.concurrent.atomic.AtomicBoolean();

    /** Local estimate of when the lease ends: the send time of the last confirmed write plus the lease. */
    volatile long leaseEndsAtNanos;

    volatile ScheduledFuture<?> expiryCheck;

    /**
     * What closing the outermost handle does. Kept instead of the handle itself, so that a handle its
     * owner dropped can be garbage collected (and its lock released by the cleaner).
     */
    volatile DefaultLockHandle.Release outermostRelease;

    /** A handle on this acquisition for events and diagnostics; closing it closes the outermost handle. */
    DefaultLockHandle view() {
        return new DefaultLockHandle(this, outermostRelease);
    }

    HeldLock(LockKeys keys, LockMode mode, String token, long fencingToken, Thread owner, boolean renewed,
            long leaseMillis, long sentAtNanos, LocalGates.Gate gate) {
        this(keys, mode, token, fencingToken, owner, renewed, leaseMillis, leaseMillis, sentAtNanos, gate, null);
    }

    HeldLock(LockKeys keys, LockMode mode, String token, long fencingToken, Thread owner, boolean renewed,
            long leaseMillis, long validMillis, long sentAtNanos, LocalGates.Gate gate, Turn turn) {
        this.keys = keys;
        this.mode = mode;
        this.token = token;
        this.fencingToken = fencingToken;
        this.owner = owner;
        this.renewed = renewed;
        this.leaseMillis = leaseMillis;
        this.validMillis = validMillis;
        this.acquiredAtNanos = System.nanoTime();
        this.leaseEndsAtNanos = sentAtNanos + validMillis * 1_000_000L;
        this.gate = gate;
        this.turn = turn;
        if (turn != null && turn.confirmed == null) {
            turn.confirmed = this; // the grant itself confirmed the lease
        }
    }

    /** Whether a loss was reported for this lock (at most once). */
    final java.util.concurrent.atomic.AtomicBoolean lossReported = new java.util.concurrent.atomic.AtomicBoolean();

    /** The holder that has this lock's Redis lease now: the end of its hand-off chain. */
    HeldLock latest() {
        HeldLock current = this;
        for (HeldLock next = current.successor; next != null; next = current.successor) {
            current = next;
        }
        return current;
    }

    /** This lock's turn at the gate passed on with a hand-off (or is passed on otherwise): never exit it again. */
    void gatePassedOn() {
        gateOpened.set(true);
    }

    /**
     * One JVM's uninterrupted possession of an exclusive key in Redis, under one owner token, over the
     * local hand-offs between its threads: the fencing tokens reserved for them, and when the turn ends.
     * Used by one holder at a time (a hand-off passes it on, with a happens-before edge).
     */
    static final class Turn {

        /** Next reserved fencing token, and the last one; next > last: a reservation round trip is due. */
        long nextFence;

        long lastFence;

        int handOffs;

        /**
         * Another instance queues for the key: the lock is handed only to the local waiters that came soon
         * enough after the grant ({@link LocalHandOff#tryHandOff}); then the holder releases it through Redis.
         */
        volatile boolean closing;

        /**
         * The holder under which Redis last confirmed the lease (grant, renewal, token reservation): when the
         * lease is found lost, every holder from this one on held it unconfirmed, and each is told.
         */
        volatile HeldLock confirmed;

        /** When Redis last said whether other instances queue (the grant, a token reservation). */
        long checkedAtNanos = System.nanoTime();

        /** When Redis granted the key (the turn began). */
        final long grantedAtNanos = checkedAtNanos;

        Turn(long nextFence, long lastFence) {
            this.nextFence = nextFence;
            this.lastFence = lastFence;
        }
    }

    /** For logs and diagnostics. */
    String ownerName() {
        return owner != null ? owner.getName() : "(none: taken asynchronously)";
    }

    String key() {
        return keys.logicalKey();
    }

    boolean exclusive() {
        return mode != LockMode.READ;
    }

    /**
     * Lets the next local waiter of an exclusive lock go, once: at release, or as soon as the lease is lost
     * (another client may take the key then, so this JVM's threads must not wait for the late close()).
     */
    void openGate() {
        if (exclusive() && gateOpened.compareAndSet(false, true)) {
            gate.exit();
        }
    }

    boolean isHeld() {
        return state.get() == State.HELD && System.nanoTime() - leaseEndsAtNanos < 0;
    }

    long leaseLeftMillis() {
        return Math.max(0, (leaseEndsAtNanos - System.nanoTime()) / 1_000_000L);
    }

    HeldLockInfo info() {
        return new HeldLockInfo(key(), mode, fencingToken, (System.nanoTime() - acquiredAtNanos) / 1_000_000L,
                leaseLeftMillis(), renewed, ownerName(), isHeld());
    }

    /** {@code holdAtLeast} in ms (0 = none): the release keeps the key until this long after the grant. */
    volatile long holdAtLeastMillis;

    /** How long the key must still stay taken for {@link #holdAtLeastMillis} (rounded up; 0 when passed). */
    long holdLeftMillis() {
        long hold = holdAtLeastMillis;
        return hold <= 0 ? 0 : Math.max(0, hold - (System.nanoTime() - acquiredAtNanos) / 1_000_000L);
    }

    @Override
    public String toString() {
        return mode + " lock '" + key() + "' (fencing token " + fencingToken + ", " + state.get() + ")";
    }
}
