package dev.leasehold.engine.holding;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.BiConsumer;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;
import dev.leasehold.engine.key.HeldLock;

import org.jspecify.annotations.Nullable;

/**
 * Which acquisition each thread holds on each key, so that a thread locking a key again joins it (same
 * fencing token) instead of waiting behind itself.
 * <p>
 * A handle may be closed from any thread while its owner re-enters. Joining, closing and detaching one
 * acquisition therefore change its hold counts under the acquisition's monitor (no I/O inside), so a
 * re-entry either joins a held acquisition or, when its last hold is being released at that moment,
 * starts a new one: never a handle on a released acquisition, never a spurious "lost".
 */
final class Reentrancy {

    /** Every engine's instance, for {@link CurrentLocks#holds}: a static question needs no engine at hand. */
    private static final Set<Reentrancy> INSTANCES = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private final ThreadBindings held = new ThreadBindings();

    /** Told when a re-entry finds the lease ran out before anyone noticed: the lock is lost. */
    private final BiConsumer<HeldLock, String> leaseRanOut;

    Reentrancy(BiConsumer<HeldLock, String> leaseRanOut) {
        this.leaseRanOut = leaseRanOut;
        INSTANCES.add(this);
    }

    /** Whether the calling thread holds the key (any key when null), bound to it, in any engine of this JVM. */
    static boolean currentThreadHolds(@Nullable String key) {
        Reentrancy[] instances;
        synchronized (INSTANCES) {
            instances = INSTANCES.toArray(new Reentrancy[0]);
        }
        Thread thread = Thread.currentThread();
        for (Reentrancy reentrancy : instances) {
            if (key != null ? isHeld(reentrancy.held.get(thread, key)) : reentrancy.held.anyOf(thread, Reentrancy::isHeld)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isHeld(@Nullable HeldLock lock) {
        return lock != null && lock.holds() > 0 && lock.isHeld(); // as its handles say: also false once the lease ran out
    }

    /**
     * The calling thread's acquisition of the key with one more hold, or null to acquire anew. Granted only
     * while the lease is known good: once its local estimate ran out (renewals did not get through) another
     * owner may hold the key already, even if the watchdog has not judged the renewal in flight yet.
     */
    @Nullable HeldLock join(String key, LockMode mode) {
        HeldLock lock = held.get(Thread.currentThread(), key);
        if (lock == null) {
            return null;
        }
        boolean ranOut;
        synchronized (lock) {
            if (lock.holds() == 0) {
                return null; // its last handle was closed just now, from another thread
            }
            ranOut = lock.state() == HeldLock.State.HELD && !lock.isHeld();
            if (!ranOut) {
                join(lock, key, mode);
                return lock;
            }
        }
        // outside the monitor: losing it tells listeners, who may do anything
        leaseRanOut.accept(lock, lock.renewed
                ? "its lease of " + lock.leaseMillis + " ms ran out before Redis confirmed a renewal"
                : "its fixed lease of " + lock.leaseMillis + " ms ran out before it was released");
        throw lost(key);
    }

    /** One more hold on a lock whose lease is good; called under the lock's monitor. */
    private void join(HeldLock lock, String key, LockMode mode) {
        if (lock.state() == HeldLock.State.LOST) {
            throw lost(key);
        }
        if (mode != LockMode.READ && !lock.exclusive()) {
            throw new IllegalStateException("This thread holds a READ lock on '" + key
                    + "' and asked for " + mode + ": upgrading a read lock would deadlock; release it first");
        }
        lock.addHolds(1);
        if (lock.addThreadBoundHolds(1) == 1) {
            held.bind(lock); // every bound handle had been detached meanwhile
        }
    }

    private static LockAcquisitionException lost(String key) {
        return new LockAcquisitionException(key, "This thread's lock on '" + key
                + "' was lost (its lease ran out) and is not released yet; close its handle before locking again");
    }

    /** A new acquisition by its owner thread. */
    void bind(HeldLock lock) {
        held.bind(lock);
    }

    /** A handle stopped tying the lock to its thread: the last one ends re-entrancy for that thread. */
    void unbind(HeldLock lock) {
        synchronized (lock) {
            if (lock.addThreadBoundHolds(-1) == 0) {
                held.unbind(lock);
            }
        }
    }

    /** Gives back one hold: null while others remain; for the last, marks it released and returns the state before. */
    HeldLock.@Nullable State exit(HeldLock lock) {
        synchronized (lock) {
            if (lock.addHolds(-1) != 0) {
                return null;
            }
            held.unbind(lock);
            return lock.getAndSetState(HeldLock.State.RELEASED);
        }
    }

    /** Drops every hold at once (shutdown); the state before, or null when it was released already. */
    HeldLock.@Nullable State exitAll(HeldLock lock) {
        synchronized (lock) {
            if (lock.holds() == 0) {
                return null;
            }
            lock.addHolds(-lock.holds());
            held.unbind(lock);
            return lock.getAndSetState(HeldLock.State.RELEASED);
        }
    }
}
