package dev.leasehold.engine.waiting;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.EngineClock;
import org.jspecify.annotations.Nullable;

/**
 * What a refused waiter does until its next try: it sleeps until a release message, the blocker's lease end (or the
 * queue's refresh) or its deadline; and in liveness mode, when no message ended the sleep, a queued exclusive waiter
 * may only look ({@link LockServer#lookWhileQueued}: four commands, reads only) instead of trying (seven, writes). A
 * try that keeps or takes a place in the queue keeps the entry for three times the sleep it answers plus the entry
 * timeout; a look writes nothing, so it is sent only while that expiry still covers the sleep after it with a third of
 * the entry timeout to spare (a waiter woken late, its thread descheduled, still finds its entry). With the defaults
 * (refresh 1 s, claim and entry timeouts 3 s) a head behind a long hold tries once and then looks four times; the next
 * in line (4 s sleeps) looks twice. A message means a grant or a turn, which only a try takes. One per
 * {@link Acquisition}, used on its steps only (not thread-safe).
 */
final class BetweenTries {

    /** How many sleeps a try keeps a writer's queue entry for (queue.lua's LOOKS_PER_TRY_PLUS_ONE). */
    static final int SLEEPS_KEPT = 3;

    private final WaitContext context;

    private final LockKeys keys;

    private final String waiterId;

    private final boolean queues;

    private final boolean looks;

    private final long entryNanos;

    private final long deadline;

    private final ReleaseWatch releases;

    private final Waits waits;

    private final BooleanSupplier stopping;

    /** The acquisition's next try. */
    private final Runnable tryAgain;

    /** Until when (engine clock) the last try's queue entry is known to last; 0: none known, the next look is a try. */
    private long coveredUntil;

    /** The sleep the last try answered: the longest a look may put the waiter to sleep for. */
    private long boundMillis;

    BetweenTries(WaitContext context, LockKeys keys, String waiterId, boolean exclusive, long deadline,
            ReleaseWatch releases, Waits waits, BooleanSupplier stopping, Runnable tryAgain) {
        this.context = context;
        this.keys = keys;
        this.waiterId = waiterId;
        this.queues = context.server.queuesWaiters();
        this.looks = queues && exclusive && context.server.queueLiveness();
        this.entryNanos = TimeUnit.MILLISECONDS.toNanos(context.settings.fairQueue().entryMillis());
        this.deadline = deadline;
        this.releases = releases;
        this.waits = waits;
        this.stopping = stopping;
        this.tryAgain = tryAgain;
    }

    /**
     * A try sent at {@code sentAtNanos} was refused and kept the waiter in the queue: Redis keeps its entry at least
     * three times {@code sleepMillis} plus the entry timeout from then (it ran after the try was sent; queue.lua).
     */
    void triedInQueue(long sentAtNanos, long sleepMillis) {
        if (looks) {
            coveredUntil = sentAtNanos + TimeUnit.MILLISECONDS.toNanos(SLEEPS_KEPT * sleepMillis) + entryNanos;
            boundMillis = sleepMillis;
        }
    }

    /** Anything else came of a try (not queued, unanswered, granted): the next look is a try. */
    void forget() {
        coveredUntil = 0;
    }

    /**
     * Whether the look at {@code nowNanos} may be a look rather than a try: not once the deadline passed (the last
     * try says how the wait ends; a look would only put it to sleep for no time, again and again).
     */
    private boolean mayLook(long nowNanos) {
        return coveredUntil != 0 && deadline - nowNanos > 0
                && nowNanos + TimeUnit.MILLISECONDS.toNanos(boundMillis) + entryNanos / 3 - coveredUntil <= 0;
    }

    /**
     * Sleeps as {@code refused} says, then looks or tries again. wroteNoLiveness: what put it to sleep (a look, or a
     * try of a waiter already queued) left the instance's liveness key to the heartbeat.
     */
    void sleep(Grant refused, boolean wroteNoLiveness) {
        long leftNanos = deadline - EngineClock.nanoTime();
        // per entry (a Cluster), the next try refreshes it; with liveness the heartbeat does, as long as the script said
        boolean refreshes = queues && !context.server.queueLiveness();
        long waitNanos = Math.min(leftNanos, TimeUnit.MILLISECONDS.toNanos(refreshes
                ? Math.min(refused.blockedForMillis(), context.settings.fairQueue().refreshMillis())
                : refused.blockedForMillis()));
        context.sleeping.incrementAndGet();
        if (queues && !refreshes) {
            context.sleepingInQueue(wroteNoLiveness);
        }
        // no message: the holder's lease may have ended; look again
        CompletableFuture<Void> release = releases.release();
        waits.then(waits.until(release, releases.sleepNanos(waitNanos)), () -> {
            context.sleeping.decrementAndGet();
            if ((release == null || !release.isDone()) && mayLook(EngineClock.nanoTime())) {
                look();
            }
            else {
                tryAgain.run();
            }
        });
    }

    /** Refused, it sleeps again; the key free or granted to it, its entry gone, or no answer: it tries. */
    private void look() {
        if (stopping.getAsBoolean() || releases.lapsed()) {
            tryAgain.run();
            return;
        }
        releases.beforeTry();
        CompletableFuture<@Nullable Grant> answer;
        try {
            answer = context.server.lookWhileQueued(keys, waiterId);
        }
        catch (RuntimeException ex) {
            answer = CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<@Nullable Grant> sent = answer;
        waits.then(waits.untilReply(sent, context.replyWaitNanos(deadline)), () -> {
            Grant refused = sent.isDone() && !sent.isCompletedExceptionally() ? sent.join() : null;
            if (refused == null || stopping.getAsBoolean() || deadline - EngineClock.nanoTime() <= 0) {
                tryAgain.run();
            }
            else {
                sleep(refused, true);
            }
        });
    }
}
