package dev.leasehold.engine;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * How a lock ends: released by its last handle (handed to the next local waiter, or released in Redis),
 * or lost (its lease ran out unrenewed, or Redis refused a renewal). Releases still in flight are tracked,
 * so shutdown can wait for them before the connection goes.
 */
final class LockEndings {

    private static final Log logger = LogFactory.getLog(DefaultLockEngine.class);

    private static final CompletableFuture<Void> RELEASED = CompletableFuture.completedFuture(null);

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockObserver observer;

    private final LocalHandOff handOff;

    /** Every lock the engine holds now, attached to a thread or not. */
    final Set<HeldLock> active = ConcurrentHashMap.newKeySet();

    /** Locks whose release was sent and not answered yet: closing waits for them before the connection goes. */
    private final Set<HeldLock> releasing = ConcurrentHashMap.newKeySet();

    private Watchdog watchdog;

    LockEndings(LockServer server, LockEngineSettings settings, LockObserver observer, LocalHandOff handOff) {
        this.server = server;
        this.settings = settings;
        this.observer = observer;
        this.handOff = handOff;
    }

    /** The watchdog reports losses here, and forgets locks this releases (it is made after this). */
    void watchedBy(Watchdog watchdog) {
        this.watchdog = watchdog;
    }

    /**
     * Ends a lock whose last hold was given back ({@code before}: its state then). Completes once Redis
     * answered, or the Redis timeout passed; it never blocks, so it may be called from an I/O thread.
     */
    CompletableFuture<Void> release(HeldLock lock, HeldLock.State before) {
        watchdog.forget(lock);
        active.remove(lock);
        observer.released(lock.key(), lock.mode, System.nanoTime() - lock.acquiredAtNanos);
        lock.attempt.released();
        if (handOff.tryHandOff(lock, before)) {
            lock.gate.leave(); // the next local holder has the key now, and Redis was not told
            return RELEASED;
        }
        releasing.add(lock);
        CompletableFuture<Boolean> reply;
        try {
            long keep = lock.holdLeftMillis();
            reply = keep > 0 ? server.release(lock.keys, lock.mode, lock.token, keep)
                    : server.release(lock.keys, lock.mode, lock.token);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        // the next local waiter may go now, not a round trip later: its acquire follows the release on
        // the same connection, and Redis runs them in that order (if the release is lost, it waits as usual)
        lock.openGate();
        return reply.orTimeout(settings.redisTimeout().toMillis(), TimeUnit.MILLISECONDS).handle((released, error) -> {
            try {
                if (error != null) {
                    logger.warn("Could not release " + lock + " (" + QueueHeadAcquirer.describe(error)
                            + "); it will expire within " + lock.leaseMillis + " ms");
                }
                else if (!released && before == HeldLock.State.HELD) {
                    // the lease ran out before release and nobody noticed yet (e.g. a fixed lease just expired)
                    lock.state.set(HeldLock.State.LOST);
                    String reason = "it was no longer held in Redis when released (the lease ran out)";
                    reportChainLost(lock, reason);
                    reportLost(lock, reason);
                    lock.state.set(HeldLock.State.RELEASED);
                }
            }
            finally {
                lock.gate.leave();
                releasing.remove(lock);
            }
            return null;
        });
    }

    /** The watchdog found the lease lost. */
    void lose(HeldLock lock, String reason) {
        if (lock.state.compareAndSet(HeldLock.State.HELD, HeldLock.State.LOST)) {
            // another client may take the key now: so may this JVM's next waiter, not only after close()
            lock.openGate();
            reportChainLost(lock, reason);
            reportLost(lock, reason);
        }
    }

    /**
     * The lease of a lock that was handed off locally is found lost: the threads that held it since Redis
     * last confirmed it (and have released it since) held it unconfirmed too, so each of them is told.
     */
    void reportChainLost(HeldLock lock, String reason) {
        HeldLock.Turn turn = lock.turn;
        if (turn == null) {
            return;
        }
        for (HeldLock holder = turn.confirmed; holder != null && holder != lock; holder = holder.successor) {
            if (holder.state.get() == HeldLock.State.RELEASED) {
                reportLost(holder, reason + "; found after it had handed the lock on, and Redis had not confirmed "
                        + "the lease since before it held it");
            }
        }
    }

    private void reportLost(HeldLock lock, String reason) {
        if (!lock.lossReported.compareAndSet(false, true)) {
            return;
        }
        logger.warn("Lost " + lock + " held by thread '" + lock.ownerName() + "': " + reason
                + ". Another owner may hold it now; work done under it is no longer protected.");
        observer.lost(lock.view(), reason);
        lock.attempt.lost(reason);
    }

    /**
     * Releases other threads sent just before close (a shutdown hook unlocking) must reach Redis before
     * the server's connection closes, or their keys would block others for a whole lease.
     */
    void awaitReleasesInFlight() {
        long deadline = System.nanoTime() + settings.redisTimeout().toNanos() + 100_000_000L;
        while (!releasing.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(1);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
