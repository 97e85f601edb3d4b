package dev.leasehold.engine.key;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.leasehold.LockMode;
import dev.leasehold.engine.key.KeyTransitions.Event;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * One key inside this JVM: every state it can be in and every way it moves, in one place. Acquisitions of the key
 * (blocking and asynchronous alike) queue here first come first served, so only the one whose turn it is talks to
 * Redis; an exclusive holder keeps the turn until it releases, and may hand the lock itself to the next waiter
 * without a Redis round trip (node-level lock caching, as the lock managers of cluster file systems keep a lock at
 * the node while its processes want it).
 * <p>
 * The states ({@link Phase}; what else each has is in {@link LineState}, replaced as a whole under this object's
 * monitor, so a phase and its holder never disagree):
 * <ul>
 * <li><b>FREE</b>: nobody has the turn, nobody waits.</li>
 * <li><b>ACQUIRING</b>: the waiter at the head has the turn and asks Redis; the others wait here.</li>
 * <li><b>HELD</b>: an exclusive lock of this JVM, the holder, has the key in Redis, and the turn.</li>
 * <li><b>LINGERING</b>: the holder was released with nobody waiting; its thread waits up to the linger for a thread
 * of its turn to come back (the key is still this JVM's in Redis).</li>
 * <li><b>TAKING_OVER</b>: the holder handed the lock to the next waiter, whose first step may still confirm it in
 * Redis (a token reservation, when the reserved block is used up or the turn is due a check).</li>
 * <li><b>TAKE_OVER_LOST</b>: the lock being taken over was found lost; its take-over still ends, then its waiter asks
 * Redis.</li>
 * <li><b>CLOSING</b>: the engine shuts down while a lock of this JVM has the key: nothing is handed on.</li>
 * <li><b>CLOSED</b>: the engine shut down: every waiter gets the turn at once, and gives up.</li>
 * </ul>
 * Every move is a named transition below (the events of {@link KeyTransitions}, whose table lists the legal moves and
 * checks each one when assertions are enabled). A transition returns what its caller must carry out outside the
 * monitor (send a release, give a handed lock back, tell holders they lost, use a lock taken over); the callers
 * (waiting, the watchdog, the endings of locks) decide nothing about a key themselves. Completing a waiter's turn
 * runs its continuation, so it is always done after leaving the monitor.
 * <p>
 * Why a hand-off is safe (one owner token in Redis, a fencing token of its own from the reserved block, the lease
 * estimate inherited, a later loss told to every holder since the last confirmation): docs/how-it-works.md. Once a
 * token reservation finds another instance queued for the key, the turn serves only the local waiters that came
 * before its grant or within the turn check of it (a gated turn); it ends then, after
 * {@link HandOffRules#maxHandOffs()} hand-offs in any case, or when the lease estimate is too short.
 */
public final class KeyLine {

    private final String key;

    private final HandOffRules rules;

    // both guarded by this object's monitor
    // made for the first waiter: a held lock keeps its line, and most have nobody waiting (56 bytes per lock)
    private @Nullable ArrayDeque<Waiter> waiting;

    private LineState state = LineState.FREE;

    /** Acquisitions and locks using this line; changed only inside {@link KeyLines}' map. */
    int users;

    KeyLine(String key, HandOffRules rules) {
        this.key = key;
        this.rules = rules;
    }

    public String key() {
        return key;
    }

    public synchronized Phase phase() {
        return state.phase;
    }

    synchronized int queued() {
        return Waiters.size(waiting);
    }

    /** The one place the state changes; the move is checked against the table when assertions are enabled. */
    private void move(Event event, LineState next) {
        assert next == state || KeyTransitions.check(state, event, next, key);
        state = next;
    }

    private static boolean closing(Phase phase) {
        return phase == Phase.CLOSING || phase == Phase.CLOSED;
    }

    /**
     * enter: queues for the turn, without blocking: the waiter's {@link Waiter#turn()} completes when the turn comes
     * (at once when the key is FREE). A waiter that stops waiting before then calls {@link #giveUp}.
     * @param takeOverMode the mode in which this waiter takes an exclusive watchdog lock handed to it, or null when
     * it cannot take one (a reader, a fixed lease)
     * @param owner the thread the lock will belong to, or null for an acquisition bound to no thread
     */
    public Waiter enter(@Nullable LockMode takeOverMode, @Nullable Thread owner) {
        synchronized (this) {
            Phase phase = state.phase;
            if (closing(phase)) {
                return Waiter.FIRST;
            }
            if (phase == Phase.FREE) {
                move(Event.ENTER, LineState.ACQUIRING);
                return Waiter.FIRST;
            }
            Waiter waiter = new Waiter(owner, takeOverMode);
            (waiting != null ? waiting : (waiting = new ArrayDeque<>(2))).add(waiter);
            if (state.lingerer != null) {
                EngineClock.unpark(state.lingerer); // a thread came back: the lingering release hands on to it
            }
            return waiter;
        }
    }

    /**
     * A waiter leaving: null once it is out of the queue, or the turn that reached it first (when a hand-off or a
     * passed turn claimed it at that moment, this waits the few instructions until that turn is complete).
     */
    public @Nullable Turn giveUp(Waiter waiter) {
        if (waiter.claim()) {
            synchronized (this) {
                if (waiting != null) { // null once closed
                    waiting.remove(waiter);
                }
            }
            waiter.turn().complete(null);
            return null;
        }
        return waiter.turn().join();
    }

    /** leaveTurn: the waiter with the turn ends without the lock (gave up, failed, shut down). */
    public void leaveTurn() {
        Waiter next;
        synchronized (this) {
            next = passTurn(Event.LEAVE_TURN);
        }
        start(next);
    }

    /**
     * granted / grantedShared: Redis granted the key to the waiter with the turn. An exclusive lock keeps the turn
     * (HELD); readers share the key, so the next local waiter may try at once.
     * @param reservedThrough the last fencing token the grant reserved for hand-offs
     */
    public void granted(HeldLock lock, long reservedThrough) {
        Waiter next = null;
        lock.on(this);
        synchronized (this) {
            if (!lock.exclusive()) {
                next = passTurn(Event.GRANTED_SHARED);
            }
            else {
                move(Event.GRANTED, LineState.granted(lock, reservedThrough, closing(state.phase),
                        EngineClock.nanoTime()));
            }
        }
        start(next);
    }

    /**
     * release (then lingerEnded while it lingers): the last hold of {@code lock} was given back (its state was
     * {@code before}). It is handed to the next local waiter when the rules allow, or released in Redis (the turn
     * passes on at once: the next waiter's acquire follows the release on the same connection, and Redis runs them in
     * that order). With nobody waiting yet in a turn other threads of this JVM took part in, the lock's own thread
     * first waits up to the linger for one of them to come back (LINGERING, see {@link HandOffRules#linger()}), when
     * its caller waits for the release anyway.
     * @param blocking the caller waits for the release ({@code close()}, not {@code closeAsync()}): only such a
     * release may linger, never one whose caller was promised it is not blocked
     */
    public ReleaseOutcome release(HeldLock lock, HeldLock.State before, boolean blocking) {
        long lingerUntil = 0;
        Event event = Event.RELEASE;
        while (true) {
            Waiter next;
            HeldLock successor = null;
            boolean linger = false;
            List<HeldLock> unconfirmed = List.of();
            synchronized (this) {
                LineState current = state;
                if (current.holder != lock) {
                    return ReleaseOutcome.NOT_THE_HOLDER; // a reader, or a lock whose loss passed the turn on already
                }
                Phase phase = current.phase;
                boolean mayHandOff = phase != Phase.TAKE_OVER_LOST && !closing(phase)
                        && current.allowsHandOff(rules, before);
                next = mayHandOff ? Waiters.claimTakeOver(waiting, current, rules) : null;
                if (next != null) {
                    successor = lock.handedTo(next, current.fenceForHandOff(rules, EngineClock.nanoTime())).on(this);
                    move(event, current.handedTo(successor));
                }
                else if (mayHandOff && blocking && mayLinger(current, lock)) {
                    long now = EngineClock.nanoTime();
                    lingerUntil = lingerUntil != 0 ? lingerUntil : now + rules.lingerNanos();
                    linger = now - lingerUntil < 0;
                    if (linger && phase != Phase.LINGERING) {
                        move(event, current.lingering(Thread.currentThread()));
                    }
                }
                if (next == null && !linger) {
                    unconfirmed = current.unconfirmed;
                    next = passTurn(event);
                }
            }
            if (successor != null) {
                Objects.requireNonNull(next, "a successor is a waiter's").turn().complete(new Turn(successor));
                return new ReleaseOutcome(successor, List.of());
            }
            if (linger) {
                event = Event.LINGER_ENDED;
                // on the engine's clock (a virtual one decides when the linger is over); enter(), lost(), close() wake it
                EngineClock.parkNanos(this, lingerUntil - EngineClock.nanoTime());
                continue;
            }
            start(next);
            return unconfirmed.isEmpty() ? ReleaseOutcome.IN_REDIS : new ReleaseOutcome(null, unconfirmed);
        }
    }

    /** takenOver: the handed lock, its token from the reserved block, is ready (HELD); else it is given back. */
    public TakeOverStep takenOver(HeldLock successor) {
        synchronized (this) {
            LineState current = state;
            if (current.phase == Phase.TAKING_OVER && current.holder == successor
                    && successor.state() == HeldLock.State.HELD) {
                move(Event.TAKEN_OVER, current.in(Phase.HELD));
                return new TakeOverStep(TakeOverStep.Kind.READY, successor, List.of());
            }
            return takeOverEnded(successor, Event.TAKE_OVER_FAILED, TakeOverStep.Kind.GIVE_BACK, true);
        }
    }

    /**
     * reservationAnswered / reservationRefused: the successor's token reservation, sent at {@code sentAtNanos},
     * answered: the next block ({@code block}; the lease is confirmed), and the lock is ready (HELD) unless it was lost
     * or the engine closes meanwhile (then it is given back); or null, the owner token no longer holds the key: the
     * lease was lost under the holders before, who are told.
     */
    public TakeOverStep reservationAnswered(HeldLock successor, FenceBlock block, long sentAtNanos) {
        synchronized (this) {
            if (block == null) {
                return takeOverEnded(successor, Event.RESERVATION_REFUSED, TakeOverStep.Kind.KEY_GONE, true);
            }
            LineState current = state;
            if (current.holder != successor) {
                return takeOverEnded(successor, Event.RESERVATION_ANSWERED, TakeOverStep.Kind.GIVE_BACK, false);
            }
            successor.confirmedAt(sentAtNanos);
            successor.fencingToken(block.first());
            LineState reserved = current.reserved(block, EngineClock.nanoTime());
            if (current.phase == Phase.TAKING_OVER && successor.state() == HeldLock.State.HELD) {
                move(Event.RESERVATION_ANSWERED, reserved.in(Phase.HELD));
                return new TakeOverStep(TakeOverStep.Kind.READY, successor, List.of());
            }
            // confirmed: nobody before held it unconfirmed, so a refused give-back tells nobody
            return takeOverEnded(successor, Event.RESERVATION_ANSWERED, TakeOverStep.Kind.GIVE_BACK, false);
        }
    }

    /**
     * reservationTimedOut: the successor's reservation got no answer within the Redis timeout, or its waiter stopped
     * first. It is given back once the answer comes, which still tells whether the holders before held the key.
     */
    public TakeOverStep reservationTimedOut(HeldLock successor) {
        synchronized (this) {
            return takeOverEnded(successor, Event.RESERVATION_TIMED_OUT,
                    TakeOverStep.Kind.GIVE_BACK_AFTER_RESERVATION, true);
        }
    }

    /**
     * A take-over ends without the lock: it never existed for anyone, and its waiter keeps the turn and asks Redis
     * (ACQUIRING; CLOSED when closing). The holders since Redis last confirmed the lease are told if it turns out
     * lost ({@code tellUnconfirmed}); nobody when the successor no longer had the turn (a loss found meanwhile told
     * them already).
     */
    private TakeOverStep takeOverEnded(HeldLock successor, Event event, TakeOverStep.Kind kind,
            boolean tellUnconfirmed) {
        successor.compareAndSetState(HeldLock.State.HELD, HeldLock.State.RELEASED);
        LineState current = state;
        List<HeldLock> tell = List.of();
        if (current.holder == successor) {
            tell = tellUnconfirmed ? current.unconfirmed : List.of();
            move(event, closing(current.phase) ? LineState.CLOSED : LineState.ACQUIRING);
        }
        return new TakeOverStep(kind, successor, tell);
    }

    /**
     * lost: the lease of {@code lock} was found lost (marked LOST here when it was HELD; a lock RELEASED while its
     * release is still on its way here, or lingers, loses it too). Another owner may take the key now, so the turn
     * passes on at once, not at the late close(), and a release lingering on it hands nothing on; a lock being taken
     * over keeps its waiter's turn (TAKE_OVER_LOST). Returns whom to tell; nobody when it was lost already.
     */
    public Loss lost(HeldLock lock) {
        Waiter next = null;
        Loss loss;
        synchronized (this) {
            boolean held = lock.compareAndSetState(HeldLock.State.HELD, HeldLock.State.LOST);
            if (!held && lock.state() != HeldLock.State.RELEASED) {
                return Loss.NONE; // lost already
            }
            LineState current = state;
            List<HeldLock> tell = List.of();
            if (current.holder == lock) {
                tell = current.unconfirmed;
                switch (current.phase) {
                    case TAKING_OVER -> move(Event.LOST, current.takeOverLost());
                    case CLOSING -> move(Event.LOST, LineState.CLOSED);
                    default -> {
                        if (current.lingerer != null) {
                            EngineClock.unpark(current.lingerer); // its release is no longer the holder's: it ends
                        }
                        next = passTurn(Event.LOST);
                    }
                }
            }
            loss = Loss.of(held, tell);
        }
        start(next);
        return loss;
    }

    /**
     * renewalConfirmed, or the verdict of a renewal's answer for {@code sent} (sent at {@code sentAtNanos}; null:
     * no answer yet, or an error). A lock handed off meanwhile renewed its successor's lease (same token in Redis),
     * so the verdict is for the lock of the chain that has the lease now. A refusal loses it, even a holder whose
     * release has not passed the key on yet (it may linger for a thread of its turn); a lease that ran out
     * unconfirmed loses it; a failure before that is retried.
     */
    public RenewalVerdict renewalAnswered(HeldLock sent, @Nullable Boolean renewed, long sentAtNanos) {
        synchronized (this) {
            LineState current = state;
            HeldLock lock = current.holder != null && current.holder.token.equals(sent.token) ? current.holder : sent;
            RenewalVerdict verdict = RenewalVerdict.of(lock, sent, renewed, sentAtNanos);
            if (verdict == RenewalVerdict.CONFIRMED && current.holder == lock && !current.unconfirmed.isEmpty()) {
                move(Event.RENEWAL_CONFIRMED, current.confirmed());
            }
            return verdict;
        }
    }

    /** close: shutdown: every queued waiter, and every later one, gets the turn at once (and gives up). */
    public void close() {
        List<Waiter> all;
        synchronized (this) {
            LineState current = state;
            if (!closing(current.phase)) {
                move(Event.CLOSE, current.phase.hasHolder() ? current.in(Phase.CLOSING) : LineState.CLOSED);
            }
            if (current.lingerer != null) {
                EngineClock.unpark(current.lingerer); // it releases in Redis now
            }
            all = waiting == null ? List.of() : new ArrayList<>(waiting);
            waiting = null;
        }
        for (Waiter waiter : all) {
            if (waiter.claim()) {
                waiter.turn().complete(Turn.FREE);
            }
        }
    }

    /**
     * Whether the releasing thread may wait a moment for a waiter: nobody waits, and the release is the lock's own
     * blocking thread's (never an I/O thread's), in a turn other threads took part in (see {@link LineState#mayLinger}).
     */
    private boolean mayLinger(LineState current, HeldLock lock) {
        return Waiters.size(waiting) == 0 && lock.owner == Thread.currentThread()
                && !Thread.currentThread().isInterrupted() && current.mayLinger(rules, EngineClock.nanoTime());
    }

    /** The turn goes to the next waiter (ACQUIRING), or nobody has it (FREE; CLOSED when closing). */
    private @Nullable Waiter passTurn(Event event) {
        Waiter next = Waiters.claimNext(waiting);
        move(event, closing(state.phase) ? LineState.CLOSED : next != null ? LineState.ACQUIRING : LineState.FREE);
        return next;
    }

    private static void start(@Nullable Waiter next) {
        if (next != null) {
            next.turn().complete(Turn.FREE);
        }
    }

    @Override
    public synchronized String toString() {
        return "KeyLine['" + key + "' " + state + ", " + queued() + " waiting]";
    }
}
