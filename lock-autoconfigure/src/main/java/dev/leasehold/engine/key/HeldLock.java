package dev.leasehold.engine.key;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;

import dev.leasehold.LockMode;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * One acquisition of a key in this JVM, shared by the handles of its re-entries: its owner token in Redis, its
 * fencing token, its lease estimate and how it ends. Whose turn the key is, and hand-offs, are its
 * {@link KeyLine}'s business.
 * <p>
 * A JVM may hold a hundred thousand of these at once, so its counters and flags are plain fields (changed under
 * this object's monitor, or by compare-and-set through a {@link VarHandle}) rather than atomics of their own:
 * four atomic objects were 64 bytes per held lock.
 */
public final class HeldLock {

    private static final VarHandle STATE;

    private static final VarHandle LOSS_REPORTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(HeldLock.class, "state", State.class);
            LOSS_REPORTED = lookup.findVarHandle(HeldLock.class, "lossReported", boolean.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** How the acquisition stands: held, given back, or lost (its lease ran out or Redis refused a renewal). */
    public enum State {
        HELD, RELEASED, LOST
    }

    public final LockKeys keys;

    public final LockMode mode;

    /** The owner token in Redis (the same for every lock of one hand-off chain). */
    public final String token;

    /** The thread it is re-entrant for; null for a lock taken asynchronously (bound to no thread). */
    public final @Nullable Thread owner;

    /** True when the watchdog renews the lease; false for a fixed lease. */
    public final boolean renewed;

    public final long leaseMillis;

    /** How long after a confirmed acquire or renewal was sent the lease counts as held (LockServer#validMillis). */
    public final long validMillis;

    public final long acquiredAtNanos;

    /** Whether it may be handed to a local waiter: an exclusive watchdog lock on a server that reserves tokens. */
    final boolean handOffable;

    /**
     * The line this lock has its turn on, set when the line learns of it (the grant, a hand-off); null before.
     * Spares the watchdog a lookup of the key's line per lock and tick (most of a tick's CPU with a million locks).
     */
    @Nullable KeyLine line;

    /** Open handles of this acquisition; changed only while holding this object's monitor (see Reentrancy). */
    private volatile int holds = 1;

    /** Open handles that still tie this lock to its owner thread for re-entrancy (not detached); ditto. */
    private int threadBoundHolds = 1;

    private volatile State state = State.HELD;

    /** Whether a loss was reported for this lock (at most once). */
    private volatile boolean lossReported;

    /** Whether the watchdog renews it now (a watchdog lock from its registration until it is released or lost). */
    private volatile boolean watched;

    /** Set once before the lock is delivered (a hand-off may reserve it after the turn passed). */
    private volatile long fencingToken;

    /** Local estimate of when the lease ends: the send time of the last confirmed write plus {@link #validMillis}. */
    private volatile long leaseEndsAtNanos;

    /**
     * When the watchdog sent the renewal still on its way for this lock ({@code EngineClock.nanoTime()}), 0 when none is:
     * a retry does not send another behind it (a busy Redis would fall further behind with each copy).
     */
    private volatile long renewalSentAtNanos;

    /** What observers follow of the acquisition that granted this lock: told when its hold ends. */
    public volatile LockObserver.Attempt attempt = LockObserver.Attempt.NONE;

    /** The watchdog's timer at the end of a fixed lease. */
    public volatile @Nullable ScheduledFuture<?> expiryCheck;

    /**
     * Whether a caller received this acquisition's handle. Only such locks are reported lost: a lock made for a
     * hand-off still on its way, or granted to a wait cancelled meanwhile, was never anyone's.
     */
    public volatile boolean delivered;

    /** Why it was found lost before it was delivered: reported at delivery, if it gets there. */
    public volatile @Nullable String undeliveredLoss;

    /** {@code holdAtLeast} in ms (0 = none): the release keeps the key until this long after the grant. */
    public volatile long holdAtLeastMillis;

    /**
     * @param sentAtNanos when the write that confirmed the lease was sent (the lease estimate counts from there)
     * @param handOffable whether it may be handed to a local waiter
     */
    public HeldLock(LockKeys keys, LockMode mode, String token, long fencingToken, @Nullable Thread owner, boolean renewed,
            long leaseMillis, long validMillis, long sentAtNanos, boolean handOffable) {
        this.keys = keys;
        this.mode = mode;
        this.token = token;
        this.fencingToken = fencingToken;
        this.owner = owner;
        this.renewed = renewed;
        this.leaseMillis = leaseMillis;
        this.validMillis = validMillis;
        this.acquiredAtNanos = EngineClock.nanoTime();
        this.leaseEndsAtNanos = sentAtNanos + validMillis * 1_000_000L;
        this.handOffable = handOffable;
    }

    public long fencingToken() {
        return fencingToken;
    }

    public State state() {
        return state;
    }

    public void state(State state) {
        this.state = state;
    }

    public boolean compareAndSetState(State expected, State next) {
        return STATE.compareAndSet(this, expected, next);
    }

    public State getAndSetState(State next) {
        return (State) STATE.getAndSet(this, next);
    }

    /** Open handles; read from any thread. */
    public int holds() {
        return holds;
    }

    /** Changes the open handles by {@code delta} (under this object's monitor); returns the new count. */
    public int addHolds(int delta) {
        int now = holds + delta;
        holds = now;
        return now;
    }

    /** Open handles still bound to the owner thread (read and changed under this object's monitor). */
    public int threadBoundHolds() {
        return threadBoundHolds;
    }

    /** A lock bound to no thread from the start (taken asynchronously); under this object's monitor. */
    public void unbindFromStart() {
        threadBoundHolds = 0;
    }

    /** Changes the thread-bound handles by {@code delta} (under this object's monitor); returns the new count. */
    public int addThreadBoundHolds(int delta) {
        threadBoundHolds += delta;
        return threadBoundHolds;
    }

    /** Whether a loss was reported for this lock. */
    public boolean lossReported() {
        return lossReported;
    }

    /** True for the one caller that reports the loss (at most once per lock). */
    public boolean markLossReported() {
        return LOSS_REPORTED.compareAndSet(this, false, true);
    }

    public boolean watched() {
        return watched;
    }

    public void watched(boolean watched) {
        this.watched = watched;
    }

    void fencingToken(long token) {
        this.fencingToken = token;
    }

    /**
     * Redis confirmed the lease with a write sent at {@code sentAtNanos} (a grant, renewal or reservation). A late
     * answer to an older renewal does not move the estimate back behind a newer one's.
     */
    public void confirmedAt(long sentAtNanos) {
        long endsAt = sentAtNanos + validMillis * 1_000_000L;
        if (endsAt - leaseEndsAtNanos > 0) {
            this.leaseEndsAtNanos = endsAt;
        }
    }

    /** When the renewal on its way was sent, 0 when none is (see {@link #renewalSentAtNanos}). */
    public long renewalSentAtNanos() {
        return renewalSentAtNanos;
    }

    /** A renewal sent at {@code sentAtNanos} (never 0) is on its way; 0: its answer came (or it failed). */
    public void renewalSentAtNanos(long sentAtNanos) {
        this.renewalSentAtNanos = sentAtNanos;
    }

    /**
     * A fixed lease extended from a write sent at {@code sentAtNanos}; {@code validMillis} is what the server
     * guarantees of the new lease ({@code LockServer#validMillis}: in quorum mode less the clock-drift allowance,
     * as for a grant or renewal).
     */
    public void extendedAt(long sentAtNanos, long validMillis) {
        this.leaseEndsAtNanos = sentAtNanos + validMillis * 1_000_000L;
    }

    /** When the local estimate says the lease ends. */
    public long leaseEndsAtNanos() {
        return leaseEndsAtNanos;
    }

    public String key() {
        return keys.logicalKey();
    }

    public boolean exclusive() {
        return mode != LockMode.READ;
    }

    /** Held, and its lease known good: the local estimate has not run out. */
    public boolean isHeld() {
        return state == State.HELD && EngineClock.nanoTime() - leaseEndsAtNanos < 0;
    }

    /** Whether its lease ran out by this JVM's estimate (no renewal was confirmed in time), whatever its state. */
    public boolean leaseRanOutLocally() {
        return EngineClock.nanoTime() - leaseEndsAtNanos >= 0;
    }

    public long leaseLeftMillis() {
        return Math.max(0, (leaseEndsAtNanos - EngineClock.nanoTime()) / 1_000_000L);
    }

    /** How long the key must still stay taken for {@link #holdAtLeastMillis} (0 when passed). */
    public long holdLeftMillis() {
        long hold = holdAtLeastMillis;
        return hold <= 0 ? 0 : Math.max(0, hold - (EngineClock.nanoTime() - acquiredAtNanos) / 1_000_000L);
    }

    /** For logs and diagnostics. */
    public String ownerName() {
        return owner != null ? owner.getName() : "(none: taken asynchronously)";
    }

    @Override
    public String toString() {
        return mode + " lock '" + key() + "' (fencing token " + fencingToken + ", " + state + ")";
    }

    /**
     * The lock {@code next} takes over from this one: the same owner token and lease estimate, a fencing token of its
     * own ({@code fence}; 0 when it reserves one first).
     */
    HeldLock handedTo(Waiter next, long fence) {
        long sentAt = leaseEndsAtNanos - validMillis * 1_000_000L; // inherits the lease estimate
        return new HeldLock(keys, Objects.requireNonNull(next.takeOverMode(), "a waiter that takes over"), token, fence, next.thread(), true, leaseMillis, validMillis,
                sentAt, true);
    }

    /** The line this lock has its turn on; returns this. */
    HeldLock on(KeyLine line) {
        this.line = line;
        return this;
    }

    /** The line that knows of this lock (see {@link #line}), or null if none has yet. */
    public @Nullable KeyLine line() {
        return line;
    }
}
