package dev.leasehold.engine.key;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.support.EngineClock;

/**
 * One key inside this JVM: every state it can be in and every way it moves, in one place, each transition under
 * this object's monitor. Acquisitions of the key (blocking and asynchronous alike) queue here first come first
 * served, so only the one whose turn it is talks to Redis; an exclusive holder keeps the turn until it releases,
 * and may hand the lock itself to the next waiter without a Redis round trip (node-level lock caching, as the
 * lock managers of cluster file systems keep a lock at the node while its processes want it).
 *
 * <pre>
 *   from          transition                          to
 *   FREE          enter                               ACQUIRING (the caller has the turn at once)
 *   (any other)   enter                               (queued: the state does not move)
 *   ACQUIRING     granted, exclusive                  HELD
 *   ACQUIRING     granted, reader; leaveTurn          ACQUIRING for the next waiter, or FREE
 *   HELD          release, handed off                 TAKING_OVER
 *   HELD          release, nobody waiting yet         HELD (the releasing thread lingers, then hands off or
 *                                                     releases in Redis)
 *   HELD          release in Redis; lost              ACQUIRING for the next waiter, or FREE
 *   TAKING_OVER   takenOver                           HELD
 *   TAKING_OVER   takeOverFailed; lost                ACQUIRING (the successor's waiter keeps the turn)
 *   (any)         close                               CLOSED (every waiter gets the turn, and gives up)
 * </pre>
 *
 * <ul>
 * <li><b>FREE</b>: nobody has the turn, nobody waits.</li>
 * <li><b>ACQUIRING</b>: the waiter at the head has the turn and asks Redis; the others wait here, costing Redis
 * nothing.</li>
 * <li><b>HELD</b>: an exclusive lock of this JVM has the key in Redis, and the turn.</li>
 * <li><b>TAKING_OVER</b>: the holder handed the lock to the next waiter, whose first step may still confirm it in
 * Redis (a token reservation, when the reserved block is used up or the turn is due a check).</li>
 * <li><b>CLOSED</b>: the engine shuts down.</li>
 * </ul>
 * Why a hand-off is safe (one owner token in Redis, a fencing token of its own from the reserved block, the lease
 * estimate inherited, a later loss told to every holder since the last confirmation): docs/how-it-works.md. Once a token reservation finds another instance queued for the key, the turn serves only the
 * local waiters that came before its grant or within the turn check of it (a gated turn); it ends then, after
 * {@link HandOffRules#maxHandOffs()} hand-offs in any case, or when the lease estimate is too short.
 * <p>
 * Completing a waiter's turn runs its continuation, so it is always done after leaving the monitor.
 */
public final class KeyLine {

    /** The states of a key inside this JVM (see the class comment). */
    public enum Phase {
        FREE, ACQUIRING, HELD, TAKING_OVER, CLOSED
    }

    /** Marks a release that waits a moment for the next local waiter. */
    private static final Waiter LINGER = new Waiter(null, null);

    private final String key;

    // all guarded by this object's monitor
    // made for the first waiter: a held lock keeps its line, and most have nobody waiting (56 bytes per lock)
    private ArrayDeque<Waiter> waiting;

    private Phase phase = Phase.FREE;

    /** In HELD and TAKING_OVER: the lock that has the turn. */
    private HeldLock holder;

    /** The hand-off chain of the exclusive watchdog lock that has the key in Redis. */
    private final HandOffTurn turn;

    /** Holders that handed the lock on since Redis last confirmed the lease (a loss found later is theirs too). */
    private List<HeldLock> unconfirmed; // made at the first hand-off: most held locks are never handed off

    /** The thread whose release waits for a thread of its turn to come back (see {@link #mayLinger}), or null. */
    private Thread lingering;

    /** Acquisitions and locks using this line; changed only inside {@link KeyLines}' map. */
    int users;

    KeyLine(String key, HandOffRules rules) {
        this.key = key;
        this.turn = new HandOffTurn(rules);
    }

    public String key() {
        return key;
    }

    public synchronized Phase phase() {
        return phase;
    }

    synchronized int queued() {
        return waiting == null ? 0 : waiting.size();
    }

    /**
     * Queues for the turn, without blocking: the waiter's {@link Waiter#turn()} completes when the turn comes (at
     * once when the key is FREE). A waiter that stops waiting before then calls {@link #giveUp}.
     * @param takeOverMode the mode in which this waiter takes an exclusive watchdog lock handed to it, or null when
     * it cannot take one (a reader, a fixed lease)
     * @param owner the thread the lock will belong to, or null for an acquisition bound to no thread
     */
    public Waiter enter(LockMode takeOverMode, Thread owner) {
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                return Waiter.FIRST;
            }
            if (phase == Phase.FREE) {
                phase = Phase.ACQUIRING;
                return Waiter.FIRST;
            }
            Waiter waiter = new Waiter(owner, takeOverMode);
            if (waiting == null) {
                waiting = new ArrayDeque<>(2);
            }
            waiting.add(waiter);
            if (lingering != null) {
                LockSupport.unpark(lingering);
            }
            return waiter;
        }
    }

    /**
     * A waiter leaving: null once it is out of the queue, or the turn that reached it first (when a hand-off or a
     * passed turn claimed it at that moment, this waits the few instructions until that turn is complete).
     */
    public Turn giveUp(Waiter waiter) {
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

    /** ACQUIRING: the waiter with the turn ends without the lock (gave up, failed, shut down). */
    public void leaveTurn() {
        Waiter next;
        synchronized (this) {
            next = passTurn();
        }
        start(next);
    }

    /**
     * ACQUIRING: the waiter with the turn was granted the key by Redis. An exclusive lock keeps the turn (HELD);
     * readers share the key, so the next local waiter may try at once.
     * @param reservedThrough the last fencing token the grant reserved for hand-offs
     */
    public void granted(HeldLock lock, long reservedThrough) {
        Waiter next = null;
        lock.on(this);
        synchronized (this) {
            if (!lock.exclusive()) {
                next = passTurn();
            }
            else {
                holder = lock;
                if (phase != Phase.CLOSED) {
                    phase = Phase.HELD;
                }
                turn.begin(lock.fencingToken(), reservedThrough);
                clearUnconfirmed();
            }
        }
        start(next);
    }

    /**
     * The last hold of {@code lock} was given back (its state was {@code before}): it is handed to the next local
     * waiter when the rules allow, or released in Redis (the turn passes on at once: the next waiter's acquire
     * follows the release on the same connection, and Redis runs them in that order). With nobody waiting yet in a
     * turn other threads of this JVM took part in, the lock's own thread first waits up to the linger for one of
     * them to come back (see {@link HandOffRules#linger()}), when its caller waits for the release anyway.
     * @param blocking the caller waits for the release ({@code close()}, not {@code closeAsync()}): only such a
     * release may linger, never one whose caller was promised it is not blocked
     */
    public ReleaseOutcome release(HeldLock lock, HeldLock.State before, boolean blocking) {
        long lingerUntil = 0;
        while (true) {
            Waiter next;
            HeldLock successor = null;
            List<HeldLock> unconfirmedHolders;
            synchronized (this) {
                if (lingering == Thread.currentThread()) {
                    lingering = null;
                }
                if (holder != lock) {
                    return ReleaseOutcome.NOT_THE_HOLDER; // a reader, or a lock whose loss passed the turn on already
                }
                boolean mayHandOff = (phase == Phase.HELD || phase == Phase.TAKING_OVER)
                        && turn.allows(lock, before);
                next = mayHandOff ? claimTakeOverWaiter() : null;
                if (next == null && mayHandOff && blocking && mayLinger(lock)) {
                    long now = EngineClock.nanoTime();
                    lingerUntil = lingerUntil != 0 ? lingerUntil : now + turn.lingerNanos();
                    if (now - lingerUntil < 0) {
                        lingering = Thread.currentThread(); // enter() and close() wake it
                        next = LINGER;
                    }
                }
                unconfirmedHolders = next == LINGER ? null : unconfirmedCopy();
                if (next != null && next != LINGER) {
                    successor = turn.successorOf(lock, next, this);
                    (unconfirmed != null ? unconfirmed : (unconfirmed = new ArrayList<>(4))).add(lock);
                    holder = successor;
                    phase = Phase.TAKING_OVER;
                }
                else if (next == null) {
                    next = passTurn();
                }
            }
            if (next == LINGER) {
                LockSupport.parkNanos(this, lingerUntil - EngineClock.nanoTime());
                continue;
            }
            if (successor != null) {
                next.turn().complete(new Turn(successor));
                return new ReleaseOutcome(successor, List.of());
            }
            start(next);
            return unconfirmedHolders.isEmpty() ? ReleaseOutcome.IN_REDIS
                    : new ReleaseOutcome(null, unconfirmedHolders);
        }
    }

    /**
     * The handed-over lock is ready (its token came from the block, or a reservation confirmed it): HELD. False
     * when it was lost on the way; the waiter then keeps the turn and asks Redis.
     */
    public boolean takenOver(HeldLock successor) {
        synchronized (this) {
            if (holder != successor || phase != Phase.TAKING_OVER || successor.state() != HeldLock.State.HELD) {
                return false;
            }
            phase = Phase.HELD;
            return true;
        }
    }

    /** TAKING_OVER: a reservation sent at {@code sentAtNanos} confirmed the lease and reserved the next block. */
    public void reserved(HeldLock successor, FenceBlock block, long sentAtNanos) {
        synchronized (this) {
            if (holder != successor) {
                return;
            }
            turn.reserved(block);
            successor.confirmedAt(sentAtNanos);
            successor.fencingToken(block.first());
            clearUnconfirmed();
        }
    }

    /**
     * TAKING_OVER: the successor could not take the lock over (Redis no longer held the key, gave no answer yet, or
     * its waiter stopped): it never existed for anyone, and its waiter keeps the turn and asks Redis (ACQUIRING).
     * Returns the holders that handed the lock on since Redis last confirmed the lease: whether they held it is
     * known only from Redis's answer (the caller tells them if it was lost); empty when the successor no longer
     * had the turn (a loss found meanwhile told them already).
     */
    public List<HeldLock> takeOverFailed(HeldLock successor) {
        synchronized (this) {
            successor.compareAndSetState(HeldLock.State.HELD, HeldLock.State.RELEASED);
            List<HeldLock> tell = List.of();
            if (holder == successor) {
                tell = unconfirmedCopy();
                holder = null;
                clearUnconfirmed();
                if (phase == Phase.TAKING_OVER) {
                    phase = Phase.ACQUIRING;
                }
            }
            return tell;
        }
    }

    /**
     * The lease of {@code lock} (marked LOST; or RELEASED while its release is still on its way here, or lingers)
     * was found lost: another owner may take the key now, so the turn passes on at once, not at the late close(),
     * and a release lingering on it hands nothing on. Returns the holders that handed the lock on since Redis last
     * confirmed the lease, who held it unconfirmed too. A lock still being taken over keeps its waiter's turn.
     */
    public List<HeldLock> lost(HeldLock lock) {
        Waiter next = null;
        List<HeldLock> tell;
        synchronized (this) {
            if (holder != lock) {
                return List.of();
            }
            tell = unconfirmedCopy();
            clearUnconfirmed();
            holder = null;
            if (lingering != null) {
                LockSupport.unpark(lingering); // its release is no longer the holder's: it ends now
            }
            if (phase == Phase.TAKING_OVER) {
                phase = Phase.ACQUIRING;
            }
            else {
                next = passTurn();
            }
        }
        start(next);
        return tell;
    }

    /** The lock that has {@code lock}'s lease in Redis now: a later holder of its hand-off chain, or itself. */
    public HeldLock currentHolder(HeldLock lock) {
        synchronized (this) {
            return holder != null && holder.token.equals(lock.token) ? holder : lock;
        }
    }

    /** Redis confirmed the lease of {@code lock} (a renewal sent at {@code sentAtNanos}). */
    public void confirmed(HeldLock lock, long sentAtNanos) {
        synchronized (this) {
            lock.confirmedAt(sentAtNanos);
            if (holder == lock) {
                clearUnconfirmed();
            }
        }
    }

    /** Shutdown: every queued waiter, and every later one, gets the turn at once (and gives up). */
    public void close() {
        List<Waiter> all;
        synchronized (this) {
            phase = Phase.CLOSED;
            if (lingering != null) {
                LockSupport.unpark(lingering); // it releases in Redis now
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
     * Whether the releasing thread may wait a moment for a waiter (see {@link HandOffTurn#mayLinger()}): nobody
     * waits, and the release is the lock's own blocking thread's (never an I/O thread's).
     */
    private boolean mayLinger(HeldLock lock) {
        return (waiting == null || waiting.isEmpty()) && lock.owner == Thread.currentThread()
                && !Thread.currentThread().isInterrupted() && turn.mayLinger();
    }

    /** The head of the queue if it can take a handed lock and the turn admits it, claimed (first come first served). */
    private Waiter claimTakeOverWaiter() {
        if (waiting == null) {
            return null;
        }
        for (Waiter next = waiting.peek(); next != null && next.takeOverMode() != null
                && turn.admits(next.enteredAtNanos()); next = waiting.peek()) {
            waiting.poll();
            if (next.claim()) {
                return next;
            }
            // that waiter gave up at this moment: the next one, if any
        }
        return null;
    }

    /** The turn goes to the next waiter (ACQUIRING), or nobody has it (FREE); its completion is the caller's. */
    private Waiter passTurn() {
        holder = null;
        clearUnconfirmed();
        for (Waiter next = waiting != null ? waiting.poll() : null; next != null; next = waiting.poll()) {
            if (next.claim()) {
                if (phase != Phase.CLOSED) {
                    phase = Phase.ACQUIRING;
                }
                return next;
            }
        }
        if (phase != Phase.CLOSED) {
            phase = Phase.FREE;
        }
        return null;
    }

    private List<HeldLock> unconfirmedCopy() {
        return unconfirmed == null || unconfirmed.isEmpty() ? List.of() : List.copyOf(unconfirmed);
    }

    private void clearUnconfirmed() {
        if (unconfirmed != null) {
            unconfirmed.clear();
        }
    }

    private static void start(Waiter next) {
        if (next != null) {
            next.turn().complete(Turn.FREE);
        }
    }

    @Override
    public synchronized String toString() {
        return "KeyLine['" + key + "' " + phase + ", " + queued() + " waiting]";
    }
}
