package dev.leasehold.engine.key;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import dev.leasehold.engine.server.LockServer.FenceBlock;

import org.jspecify.annotations.Nullable;

/**
 * Everything a key's {@link KeyLine} knows besides its queue, as one immutable value that the line replaces as a whole
 * (so its phase and its holder cannot disagree): the phase; the holder (the lock that has the turn, with its lease
 * estimate and owner token); the hand-off turn of that holder (the fencing tokens reserved for hand-offs, how many it
 * made, whether other instances queue); the holders that handed the lock on since Redis last confirmed the lease; and
 * the thread whose release lingers.
 * <p>
 * One object of 72 bytes is made per grant; FREE, ACQUIRING and CLOSED are shared constants, so a lock nobody waits
 * for costs this one object (the turn is kept in the same object for that reason, not in one of its own).
 */
final class LineState {

    static final LineState FREE = new LineState(Phase.FREE, null, List.of(), null, 0, 0, 0, false, 0, 0);

    static final LineState ACQUIRING = new LineState(Phase.ACQUIRING, null, List.of(), null, 0, 0, 0, false, 0, 0);

    static final LineState CLOSED = new LineState(Phase.CLOSED, null, List.of(), null, 0, 0, 0, false, 0, 0);

    final Phase phase;

    /** The lock that has the turn (in the phases that have one, see {@link Phase#hasHolder()}), else null. */
    final @Nullable HeldLock holder;

    /** Holders that handed the lock on since Redis last confirmed the lease (a loss found later is theirs too). */
    final List<HeldLock> unconfirmed;

    /** LINGERING: the thread whose release waits for a thread of its turn; else null. */
    final @Nullable Thread lingerer;

    // the hand-off turn: the next token of the reserved block and its last, hand-offs made, whether others queue
    private final long nextFence;

    private final long lastFence;

    private final int handOffs;

    private final boolean othersQueued;

    /** When Redis last said whether other instances queue (the grant, a token reservation). */
    private final long checkedAtNanos;

    /** When Redis granted the key to this JVM (the turn began). */
    private final long grantedAtNanos;

    private LineState(Phase phase, @Nullable HeldLock holder, List<HeldLock> unconfirmed, @Nullable Thread lingerer,
            long nextFence,
            long lastFence, int handOffs, boolean othersQueued, long checkedAtNanos, long grantedAtNanos) {
        this.phase = phase;
        this.holder = holder;
        this.unconfirmed = unconfirmed;
        this.lingerer = lingerer;
        this.nextFence = nextFence;
        this.lastFence = lastFence;
        this.handOffs = handOffs;
        this.othersQueued = othersQueued;
        this.checkedAtNanos = checkedAtNanos;
        this.grantedAtNanos = grantedAtNanos;
        assert phase.hasHolder() == (holder != null) && (phase == Phase.LINGERING) == (lingerer != null)
                : "inconsistent key state " + this;
    }

    /**
     * Redis granted the key to {@code lock} at {@code nowNanos}: tokens after its fencing token through
     * {@code reservedThrough} are its turn's. HELD, or CLOSING when the engine closes meanwhile.
     */
    static LineState granted(HeldLock lock, long reservedThrough, boolean closing, long nowNanos) {
        return new LineState(closing ? Phase.CLOSING : Phase.HELD, lock, List.of(), null, lock.fencingToken() + 1,
                reservedThrough, 0, false, nowNanos, nowNanos);
    }

    private LineState with(Phase phase, @Nullable HeldLock holder, List<HeldLock> unconfirmed, @Nullable Thread lingerer) {
        return new LineState(phase, holder, unconfirmed, lingerer, nextFence, lastFence, handOffs, othersQueued,
                checkedAtNanos, grantedAtNanos);
    }

    /** The same holder and turn in another phase (TAKING_OVER to HELD; to CLOSING; a linger's end). */
    LineState in(Phase phase) {
        return with(phase, holder, unconfirmed, null);
    }

    /** LINGERING: the holder's release waits on {@code thread}. */
    LineState lingering(Thread thread) {
        return with(Phase.LINGERING, holder, unconfirmed, thread);
    }

    /** Redis confirmed the holder's lease: nobody before it held the lock unconfirmed any more. */
    LineState confirmed() {
        return with(phase, holder, List.of(), null);
    }

    /** TAKE_OVER_LOST: the lock being taken over was lost (the holders before it are told now). */
    LineState takeOverLost() {
        return with(Phase.TAKE_OVER_LOST, holder, List.of(), null);
    }

    /**
     * The fencing token for a hand-off at {@code nowNanos}, or 0 when the successor reserves more tokens first (which
     * also tells whether other instances queue): the block is used up, or that was last asked more than the turn
     * check ago (long sections).
     */
    long fenceForHandOff(HandOffRules rules, long nowNanos) {
        boolean checkDue = nowNanos - checkedAtNanos > rules.turnCheckNanos();
        return nextFence <= lastFence && !checkDue ? nextFence : 0;
    }

    /** TAKING_OVER: the holder handed the lock to {@code successor} (its token from {@link #fenceForHandOff}). */
    LineState handedTo(HeldLock successor) {
        List<HeldLock> before = new ArrayList<>(unconfirmed.size() + 1);
        before.addAll(unconfirmed);
        before.add(holder);
        return new LineState(Phase.TAKING_OVER, successor, Collections.unmodifiableList(before), null,
                successor.fencingToken() != 0 ? nextFence + 1 : nextFence, lastFence, handOffs + 1, othersQueued,
                checkedAtNanos, grantedAtNanos);
    }

    /** A token reservation sent for the holder at {@code nowNanos} answered: the next block, the lease confirmed. */
    LineState reserved(FenceBlock block, long nowNanos) {
        return new LineState(phase, holder, List.of(), null, block.first() + 1, block.last(), handOffs,
                othersQueued | block.othersQueued(), nowNanos, grantedAtNanos);
    }

    /** Whether the holder, released while it was {@code before}, may go to a local waiter (see {@link HandOffRules}). */
    boolean allowsHandOff(HandOffRules rules, HeldLock.State before) {
        return rules.allow(Objects.requireNonNull(holder, "released by its holder"), before, handOffs);
    }

    /**
     * Whether a waiter that entered at {@code enteredAtNanos} may join the turn. Once another instance queues for the
     * key, the turn is gated: the lock goes only to waiters that came before the grant or within the turn check of
     * it, then back through Redis. So a JVM with more waiters gets a longer turn, and no instance keeps the longer
     * queue: instances with equal shares of the requests wait alike (turns that ended after a fixed number of
     * hand-offs were fair in count but not in time).
     */
    boolean admits(HandOffRules rules, long enteredAtNanos) {
        return !othersQueued || enteredAtNanos - (grantedAtNanos + rules.turnCheckNanos()) < 0;
    }

    /**
     * Whether a release with nobody waiting may wait for a thread to come back: other threads of this JVM took part
     * in this turn (on a busy machine the one that handed the lock on was descheduled by the wake-up of its
     * successor, and is still on its way back), and one coming now may still join the turn.
     */
    boolean mayLinger(HandOffRules rules, long nowNanos) {
        return handOffs > 0 && rules.lingerNanos() > 0 && admits(rules, nowNanos);
    }

    @Override
    public String toString() {
        return phase + (holder != null ? " holder=" + holder : "") + (unconfirmed.isEmpty() ? ""
                : " unconfirmed=" + unconfirmed.size()) + (lingerer != null ? " lingerer=" + lingerer.getName() : "")
                + (holder != null ? " turn[next=" + nextFence + " last=" + lastFence + " handOffs=" + handOffs
                        + (othersQueued ? " othersQueued" : "") + "]" : "");
    }
}
