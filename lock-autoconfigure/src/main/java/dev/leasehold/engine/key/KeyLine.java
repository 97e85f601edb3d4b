package dev.leasehold.engine.key;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockServer.FenceBlock;

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

    private final String key;

    private final HandOffRules rules;

    // all guarded by this object's monitor
    // made for the first waiter: a held lock keeps its line, and most have nobody waiting (56 bytes per lock)
    private ArrayDeque<Waiter> waiting;

    private Phase phase = Phase.FREE;

    /** In HELD and TAKING_OVER: the lock that has the turn. */
    private HeldLock holder;

    // the hand-off chain of the exclusive watchdog lock that has the key in Redis (one owner token)
    private long nextFence;

    private long lastFence;

    private int handOffs;

    /** Another instance queues for the key: the holder releases to it instead of handing off. */
    private boolean othersQueued;

    /** When Redis last said whether other instances queue (the grant, a token reservation). */
    private long checkedAtNanos;

    /** When Redis granted the key to this JVM (the turn began). */
    private long grantedAtNanos;

    /** Holders that handed the lock on since Redis last confirmed the lease (a loss found later is theirs too). */
    private List<HeldLock> unconfirmed; // made at the first hand-off: most held locks are never handed off

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
                nextFence = lock.fencingToken() + 1;
                lastFence = reservedThrough;
                handOffs = 0;
                othersQueued = false;
                checkedAtNanos = System.nanoTime();
                grantedAtNanos = checkedAtNanos;
                clearUnconfirmed();
            }
        }
        start(next);
    }

    /**
     * The last hold of {@code lock} was given back (its state was {@code before}): it is handed to the next local
     * waiter when the rules allow, or released in Redis (the turn passes on at once: the next waiter's acquire
     * follows the release on the same connection, and Redis runs them in that order).
     */
    public ReleaseOutcome release(HeldLock lock, HeldLock.State before) {
        Waiter next;
        HeldLock successor = null;
        List<HeldLock> unconfirmedHolders;
        synchronized (this) {
            if (holder != lock) {
                return ReleaseOutcome.NOT_THE_HOLDER; // a reader, or a lock whose loss passed the turn on already
            }
            unconfirmedHolders = unconfirmedCopy();
            next = (phase == Phase.HELD || phase == Phase.TAKING_OVER) && rules.allow(lock, before, handOffs)
                    ? claimTakeOverWaiter() : null;
            if (next != null) {
                successor = successorOf(lock, next);
                (unconfirmed != null ? unconfirmed : (unconfirmed = new ArrayList<>(4))).add(lock);
                holder = successor;
                phase = Phase.TAKING_OVER;
            }
            else {
                next = passTurn();
            }
        }
        if (successor != null) {
            next.turn().complete(new Turn(successor));
            return new ReleaseOutcome(successor, List.of());
        }
        start(next);
        return unconfirmedHolders.isEmpty() ? ReleaseOutcome.IN_REDIS : new ReleaseOutcome(null, unconfirmedHolders);
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
            checkedAtNanos = System.nanoTime();
            nextFence = block.first() + 1;
            lastFence = block.last();
            othersQueued |= block.othersQueued();
            successor.confirmedAt(sentAtNanos);
            successor.fencingToken(block.first());
            clearUnconfirmed();
        }
    }

    /**
     * TAKING_OVER: the successor could not take the lock over (Redis no longer held the key, or gave no answer):
     * it never existed for anyone, and its waiter keeps the turn and asks Redis (ACQUIRING). Returns the holders
     * to tell that the lease was lost, when {@code keyLost}.
     */
    public List<HeldLock> takeOverFailed(HeldLock successor, boolean keyLost) {
        synchronized (this) {
            successor.compareAndSetState(HeldLock.State.HELD, HeldLock.State.RELEASED);
            List<HeldLock> tell = keyLost ? unconfirmedCopy() : List.of();
            if (holder == successor) {
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
     * The lease of {@code lock} (already marked LOST) was found lost: another owner may take the key now, so the
     * turn passes on at once, not at the late close(). Returns the holders that handed the lock on since Redis last
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
     * The head of the queue if it can take a handed lock (so the order stays first come first served), claimed.
     * Once another instance queues for the key, the turn is gated: the lock goes only to waiters that came before
     * the grant or within the turn check of it, then back through Redis. So a JVM with more waiters gets a longer
     * turn, and no instance keeps the longer queue: instances with equal shares of the requests wait alike (turns
     * that ended after a fixed number of hand-offs were fair in count but not in time).
     */
    private Waiter claimTakeOverWaiter() {
        long gateClosesAt = grantedAtNanos + rules.turnCheckNanos();
        if (waiting == null) {
            return null;
        }
        for (Waiter next = waiting.peek(); next != null && next.takeOverMode() != null
                && (!othersQueued || next.enteredAtNanos() - gateClosesAt < 0); next = waiting.peek()) {
            waiting.poll();
            if (next.claim()) {
                return next;
            }
            // that waiter gave up at this moment: the next one, if any
        }
        return null;
    }

    private HeldLock successorOf(HeldLock lock, Waiter next) {
        // 0: the successor reserves more tokens first, which also tells whether other instances queue: when the
        // block is used up, or when that was last asked more than the turn check ago (long sections)
        boolean checkDue = System.nanoTime() - checkedAtNanos > rules.turnCheckNanos();
        long fence = nextFence <= lastFence && !checkDue ? nextFence++ : 0;
        handOffs++;
        long sentAt = lock.leaseEndsAtNanos() - lock.validMillis * 1_000_000L; // inherits the lease estimate
        return new HeldLock(lock.keys, next.takeOverMode(), lock.token, fence, next.thread(), true, lock.leaseMillis,
                lock.validMillis, sentAt, true).on(this);
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
