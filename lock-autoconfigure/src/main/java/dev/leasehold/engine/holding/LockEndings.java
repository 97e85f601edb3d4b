package dev.leasehold.engine.holding;

import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.key.Loss;
import dev.leasehold.engine.key.ReleaseOutcome;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * How a lock ends: released by its last handle (handed to the next local waiter, or released in Redis), or lost
 * (its lease ran out unrenewed, or Redis refused a renewal). Its key's {@link KeyLine} decides the turn; this
 * talks to Redis and tells whoever held the lock. Releases still in flight are tracked, so shutdown can wait for
 * them before the connection goes.
 */
final class LockEndings {

    private static final Log logger = LogFactory.getLog("dev.leasehold.engine.DefaultLockEngine");

    private static final CompletableFuture<Void> RELEASED = CompletableFuture.completedFuture(null);

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockObserver observer;

    private final KeyLines lines;

    /** A handle on a lock for whoever is told it was lost (the lock's outermost handle). */
    private final Function<HeldLock, LockHandle> view;

    /**
     * Releases begun (a hold being given back) or sent and not answered yet: closing waits for them before the
     * connection goes (a count: no entry per lock).
     */
    private final AtomicInteger releasing = new AtomicInteger();

    @SuppressWarnings("NullAway.Init") // set right after construction (watchedBy): the two refer to each other
    private Watchdog watchdog;

    private final CoarseTimeouts timeouts;

    LockEndings(LockServer server, LockEngineSettings settings, LockObserver observer, KeyLines lines,
            Function<HeldLock, LockHandle> view, CoarseTimeouts timeouts) {
        this.timeouts = timeouts;
        this.server = server;
        this.settings = settings;
        this.observer = observer;
        this.lines = lines;
        this.view = view;
    }

    /** The watchdog reports losses here, and forgets locks this releases (it is made after this). */
    void watchedBy(Watchdog watchdog) {
        this.watchdog = watchdog;
    }

    /**
     * Ends a lock whose last hold was given back ({@code before}: its state then). Completes once Redis answered,
     * or the Redis timeout passed; it never blocks, so it may be called from an I/O thread, unless
     * {@code blocking}: its caller waits for the release anyway, so it may linger for a thread of its turn.
     */
    CompletableFuture<Void> release(HeldLock lock, HeldLock.State before, boolean blocking) {
        watchdog.forget(lock);
        observer.released(lock.key(), lock.mode, EngineClock.nanoTime() - lock.acquiredAtNanos);
        lock.attempt.released();
        KeyLine line = lines.line(lock.key());
        ReleaseOutcome outcome = line != null ? line.release(lock, before, blocking) : ReleaseOutcome.IN_REDIS;
        if (outcome.handedOff()) {
            lines.leave(Objects.requireNonNull(line, "handed off on its line")); // the next local holder has the key now, and Redis was not told
            return RELEASED;
        }
        releasing.incrementAndGet();
        // its lease ran out by this JVM's estimate before this release, and the watchdog has not said so yet (it
        // judges at its next tick): unless Redis confirms the release, the key may be another's now
        boolean ranOutUnnoticed = before == HeldLock.State.HELD && lock.leaseRanOutLocally();
        CompletableFuture<Boolean> reply;
        try {
            long keep = lock.holdLeftMillis();
            reply = keep > 0 ? server.release(lock.keys, lock.mode, lock.token, keep)
                    : server.release(lock.keys, lock.mode, lock.token);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        return timeouts.orTimeout(reply, settings.redisTimeout().toNanos()).handle((released, error) -> {
            try {
                if (error != null && ranOutUnnoticed) {
                    // the owner is told, as the watchdog would have told it at its next tick
                    lostAtRelease(lock, outcome, "its lease ran out before it was released, and the release was not "
                            + "confirmed (" + LockServerException.describe(error) + ")");
                }
                else if (error != null) {
                    logger.warn("Could not release " + lock + " (" + LockServerException.describe(error)
                            + "); it will expire within " + lock.leaseMillis + " ms");
                }
                else if (!released && before == HeldLock.State.HELD) {
                    // the lease ran out before release and nobody noticed yet (e.g. a fixed lease just expired)
                    lostAtRelease(lock, outcome, "it was no longer held in Redis when released (the lease ran out)");
                }
            }
            finally {
                if (line != null) {
                    lines.leave(line);
                }
                releasing.decrementAndGet();
            }
            return null;
        });
    }

    /** A release found the lock lost: it and the holders it handed to since the last confirmation are told. */
    private void lostAtRelease(HeldLock lock, ReleaseOutcome outcome, String reason) {
        lock.state(HeldLock.State.LOST);
        reportChain(outcome.unconfirmed(), reason);
        reportLost(lock, reason);
        lock.state(HeldLock.State.RELEASED);
    }

    /**
     * The lease of a held lock was found lost: another client may take the key now, so may this JVM's next waiter.
     * A lock released a moment ago whose release has not passed the key on yet (it lingers for a thread of its
     * turn) loses it too: nothing of it is handed on, and its release, refused by Redis, tells it.
     */
    void lose(HeldLock lock, String reason) {
        KeyLine known = lock.line();
        KeyLine line = known != null ? known : lines.line(lock.key());
        Loss loss = line != null ? line.lost(lock) : Loss.offLine(lock);
        reportChain(loss.tell(), reason);
        if (loss.reportLock()) {
            reportLost(lock, reason);
        }
    }

    /**
     * A lock handed to a waiter that will not take it (lost on the way, its waiter stopped, the engine closes)
     * holds the key in Redis under its owner token while nobody of this JVM has it: given back at once
     * (compare-and-delete), counted as a release in flight so that close() waits for it. When Redis no longer had
     * it, the holders since it last confirmed the lease ({@code unconfirmed}) are told.
     */
    void giveBack(HeldLock successor, Collection<HeldLock> unconfirmed) {
        releasing.incrementAndGet();
        sendGiveBack(successor, unconfirmed);
    }

    /**
     * {@link #giveBack} once a token reservation sent for the successor is answered (or the Redis timeout passed):
     * a take-over that ended before (its waiter stopped) must still learn from that answer whether the holders
     * before it held the key.
     */
    void giveBackAfter(CompletableFuture<LockServer.FenceBlock> reservation, HeldLock successor,
            Collection<HeldLock> unconfirmed) {
        releasing.incrementAndGet();
        timeouts.orTimeout(reservation, settings.redisTimeout().toNanos()).whenComplete((block, error) -> {
            if (error == null && block == null) {
                // the token no longer held the key: nothing to give back, and the holders before held it unconfirmed
                reportChain(unconfirmed, KEY_GONE_AT_RESERVATION);
                releasing.decrementAndGet();
            }
            else {
                // confirmed (nothing to tell), or unknown (the give-back's answer tells)
                sendGiveBack(successor, error == null ? java.util.List.of() : unconfirmed);
            }
        });
    }

    static final String KEY_GONE_AT_RESERVATION = "Redis no longer held the key when the next fencing tokens were reserved";

    private void sendGiveBack(HeldLock successor, Collection<HeldLock> unconfirmed) {
        CompletableFuture<Boolean> reply;
        try {
            reply = server.release(successor.keys, successor.mode, successor.token);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        timeouts.orTimeout(reply, settings.redisTimeout().toNanos()).whenComplete((released, error) -> {
            try {
                if (error == null && !released) {
                    reportChain(unconfirmed, "it was no longer held in Redis when the lock handed on was given back");
                }
            }
            finally {
                releasing.decrementAndGet();
            }
        });
    }

    /**
     * A lock that was handed off locally is found lost: the threads that held it since Redis last confirmed it
     * (and have released it since) held it unconfirmed too, so each of them is told.
     */
    void reportChain(Collection<HeldLock> holders, String reason) {
        for (HeldLock holder : holders) {
            if (holder.state() == HeldLock.State.RELEASED) {
                reportLost(holder, reason + "; found after it had handed the lock on, and Redis had not confirmed "
                        + "the lease since before it held it");
            }
        }
    }

    /**
     * A caller received the lock's handle: from now on a loss is reported to it, and one found before (while the
     * handle was on its way) is reported now.
     */
    void delivered(HeldLock lock) {
        lock.delivered = true;
        String loss = lock.undeliveredLoss; // read after the write above: a loss found meanwhile is seen here or there
        if (loss != null) {
            reportLost(lock, loss);
        }
    }

    private void reportLost(HeldLock lock, String reason) {
        lock.undeliveredLoss = reason;
        if (!lock.delivered) {
            return; // nobody has it (yet): told at delivery, if it is delivered
        }
        if (!lock.markLossReported()) {
            return;
        }
        logger.warn("Lost " + lock + " held by thread '" + lock.ownerName() + "': " + reason
                + ". Another owner may hold it now; work done under it is no longer protected.");
        observer.lost(view.apply(lock), reason);
        lock.attempt.lost(reason);
    }

    /** A hold is about to be given back (its release, if it is the last, is counted from now on). */
    void releaseStarting() {
        releasing.incrementAndGet();
    }

    /** The hold was given back: its release, if any, is sent and counted on its own until Redis answers. */
    void releaseStarted() {
        releasing.decrementAndGet();
    }

    /**
     * Releases other threads sent just before close (a shutdown hook unlocking) must reach Redis before the
     * server's connection closes, or their keys would block others for a whole lease.
     */
    void awaitReleasesInFlight() {
        long deadline = EngineClock.nanoTime() + settings.redisTimeout().toNanos() + 100_000_000L;
        while (releasing.get() > 0 && EngineClock.nanoTime() < deadline) {
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
