package dev.leasehold.engine.holding;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.server.LockServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Keeps the leases of running holders alive and notices lost ones.
 * <p>
 * Watchdog locks are renewed together every third of the lease: one tick sends every renewal at once,
 * in batches ({@link LockServer#renewAll}: on one Redis server a script call renews up to a thousand keys),
 * pipelined on the multiplexed connection, so a hundred thousand held locks cost a hundred script calls per
 * tick, not a hundred thousand. A renewal the server refuses (the token no longer owns the key) loses the lock at
 * once; a renewal that fails (Redis unreachable) is retried soon and loses the lock only when the
 * lease ran out unconfirmed. An answer that comes after {@code leasehold.redis-timeout} still counts (Redis did
 * extend the lease). Fixed-lease
 * locks get a timer at their lease end instead.
 * <p>
 * Releasing removes the lock here before the release is sent, and renewals are compare-then-extend on
 * the server, so a renewal can never revive a released key.
 */
final class Watchdog {

    private static final Log logger = LogFactory.getLog(Watchdog.class);

    private final LockServer server;

    private final ScheduledExecutorService scheduler;

    private final Duration redisTimeout;

    private final long renewIntervalMillis;

    /** A tick's period: a renewal on its way for longer is sent again. */
    private final long renewIntervalNanos;

    private final BiConsumer<HeldLock, String> onLost;

    private final LockObserver observer;

    private final KeyLines lines;

    /** Every lock held now; those it renews are {@link HeldLock#watched()}. */
    private final Collection<HeldLock> held;

    private volatile boolean stopped;

    private final AtomicBoolean retryScheduled = new AtomicBoolean();

    /** Renewals answered after their round gave up waiting, since renewals last all worked. */
    private final AtomicInteger lateAnswers = new AtomicInteger();

    private final LateRenewals late;

    /** Whether the last round had failures, so an outage is logged once, not on every retry. */
    private volatile boolean failing;

    private volatile ScheduledFuture<?> ticks;


    Watchdog(LockServer server, ScheduledExecutorService scheduler, Duration leaseTime, Duration redisTimeout,
            BiConsumer<HeldLock, String> onLost, LockObserver observer, KeyLines lines, Collection<HeldLock> held) {
        this.lines = lines;
        this.held = held;
        this.server = server;
        this.scheduler = scheduler;
        this.redisTimeout = redisTimeout;
        this.renewIntervalMillis = Math.max(1, leaseTime.toMillis() / 3);
        this.renewIntervalNanos = TimeUnit.MILLISECONDS.toNanos(renewIntervalMillis);
        this.late = new LateRenewals(scheduler, this::settleLate);
        this.onLost = onLost;
        this.observer = observer;
    }

    void start() {
        ticks = scheduler.scheduleWithFixedDelay(this::renewAll, renewIntervalMillis, renewIntervalMillis,
                TimeUnit.MILLISECONDS);
    }

    void stop() {
        stopped = true;
        ScheduledFuture<?> current = ticks;
        if (current != null) {
            current.cancel(false);
        }
        for (HeldLock lock : held) {
            lock.watched(false);
        }
    }

    /** Starts watching a lock just granted (one of {@link #held}). */
    void watch(HeldLock lock) {
        if (lock.renewed) {
            lock.watched(!stopped);
        }
        else {
            lock.expiryCheck = scheduler.schedule(() -> expire(lock), Math.max(1, lock.leaseLeftMillis()),
                    TimeUnit.MILLISECONDS);
        }
    }

    /** Stops watching; called before a release is sent. */
    void forget(HeldLock lock) {
        lock.watched(false);
        ScheduledFuture<?> check = lock.expiryCheck;
        if (check != null) {
            check.cancel(false);
        }
    }

    int watchedCount() {
        int watched = 0;
        for (HeldLock lock : held) {
            watched += lock.watched() ? 1 : 0;
        }
        return watched;
    }

    private void expire(HeldLock lock) {
        if (lock.state() == HeldLock.State.HELD) {
            onLost.accept(lock, "its fixed lease of " + lock.leaseMillis + " ms ran out before it was released");
        }
    }

    /**
     * One tick (or a retry): every watched lock renewed in one pipelined round, except those whose last renewal is
     * still on its way and younger than a tick. Its answer, however late, settles it: sending another behind it
     * only adds to the queue of a Redis that is already slow (with a million locks every retry sent the whole round
     * again, and Redis fell further behind each time). A renewal with no answer for a whole tick (a connection
     * that hangs) is sent again.
     */
    void renewAll() {
        try {
            if (stopped) {
                return;
            }
            long sentAt = (System.nanoTime() - 1) | 1; // never 0 (no renewal on its way), never after now
            List<HeldLock> due = new ArrayList<>(held.size());
            for (HeldLock lock : held) {
                if (!lock.watched()) {
                    continue;
                }
                long onItsWay = lock.renewalSentAtNanos();
                if (onItsWay == 0 || sentAt - onItsWay >= renewIntervalNanos) {
                    due.add(lock);
                }
                else if (sentAt - lock.leaseEndsAtNanos() >= 0) {
                    settle(lock, null, onItsWay); // its lease ran out while the answer is still on its way
                }
            }
            if (due.isEmpty()) {
                return;
            }
            List<LockServer.Renewal> renewals = new ArrayList<>(due.size());
            for (HeldLock lock : due) {
                renewals.add(new LockServer.Renewal(lock.keys, lock.mode, lock.token, lock.leaseMillis));
            }
            // batched per server (a script call renews up to a thousand keys, each compare-then-extend)
            List<CompletableFuture<Boolean>> replies = server.renewAll(renewals);
            // marked on their way only once sent: a round that threw before sending leaves them due for the retry
            // (answers are settled on this thread too, so none can come in between)
            for (HeldLock lock : due) {
                lock.renewalSentAtNanos(sentAt);
            }
            int failed = 0;
            boolean retry = false;
            for (int i = 0; i < due.size(); i++) {
                CompletableFuture<Boolean> reply = replies.get(i);
                HeldLock sent = due.get(i);
                Boolean renewed = awaitReply(reply, sentAt);
                if (reply.isDone()) {
                    answered(sent, sentAt);
                }
                if (!settle(sent, renewed, sentAt)) {
                    failed++;
                    if (reply.isDone()) {
                        retry = true; // it failed: sent again soon
                    }
                    else {
                        late.await(sent, reply, sentAt); // its late answer settles it; a retry would queue behind it
                    }
                }
            }
            if (failed > 0) {
                observer.renewalFailed(failed);
                if (!failing) {
                    logger.warn("Renewing held locks failed (Redis did not answer in time); retrying until their leases run out");
                }
                failing = true;
                if (retry) {
                    retrySoon();
                }
            }
            else {
                lateAnswers.set(0);
                recovered(due.size());
            }
        }
        catch (RuntimeException ex) {
            logger.error("Lock renewal tick failed", ex);
            retrySoon();
        }
    }

    /** The renewal sent at {@code sentAt} has its answer (or failed): the next round may send another. */
    private static void answered(HeldLock lock, long sentAt) {
        if (lock.renewalSentAtNanos() == sentAt) {
            lock.renewalSentAtNanos(0);
        }
    }

    /** Every renewal a round sent (or, after failures, every late one) got Redis's answer. */
    private void recovered(int answers) {
        observer.renewed(answers);
        if (failing) {
            failing = false;
            logger.info("Renewing held locks works again");
        }
    }

    /**
     * On the watchdog's thread: the late answers (or failures) that arrived. One that confirmed nothing is retried
     * soon; once every late answer is in, the observer hears that renewals work again.
     */
    private void settleLate() {
        boolean[] retry = { false };
        late.drain(answer -> {
            answered(answer.lock(), answer.sentAtNanos());
            if (answer.renewed() != null) {
                lateAnswers.incrementAndGet();
            }
            if (!settle(answer.lock(), answer.renewed(), answer.sentAtNanos())) {
                retry[0] = true;
            }
        });
        if (retry[0]) {
            retrySoon();
        }
        else if (failing && !late.anyAwaited() && lateAnswers.get() > 0) {
            // every renewal that failed to answer in time has its answer now: Redis answers again
            recovered(lateAnswers.getAndSet(0));
        }
    }

    /**
     * What a renewal's answer means for its lock (sent at {@code sentAt}; null: no answer yet, or an error).
     * False when the lock is still held, unconfirmed and its lease not yet over: it is retried.
     */
    private boolean settle(HeldLock sent, Boolean renewed, long sentAt) {
        // a lock handed off meanwhile renewed its successor's lease (same token in Redis)
        KeyLine known = sent.line();
        KeyLine line = known != null ? known : lines.line(sent.key());
        HeldLock lock = line != null ? line.currentHolder(sent) : sent;
        if (lock.state() != HeldLock.State.HELD || (lock == sent && !lock.watched())) {
            return true;
        }
        if (Boolean.TRUE.equals(renewed)) {
            if (line != null) {
                line.confirmed(lock, sentAt);
            }
            else {
                lock.confirmedAt(sentAt);
            }
            return true;
        }
        if (Boolean.FALSE.equals(renewed)) {
            lock.watched(false);
            onLost.accept(lock, "Redis refused the renewal: the key expired or is owned by someone else");
            return true;
        }
        if (System.nanoTime() - lock.leaseEndsAtNanos() >= 0) {
            lock.watched(false);
            onLost.accept(lock, "renewal failed until the lease of " + lock.leaseMillis + " ms ran out");
            return true;
        }
        return false;
    }

    /** Null when the reply did not come (error or timeout). */
    private Boolean awaitReply(CompletableFuture<Boolean> reply, long sentAt) {
        long left = redisTimeout.toNanos() - (System.nanoTime() - sentAt);
        try {
            return reply.get(Math.max(0, left), TimeUnit.NANOSECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return null;
        }
        catch (Exception ex) {
            logger.debug("A lock renewal did not succeed: " + ex);
            return null;
        }
    }

    private void retrySoon() {
        // between regular ticks, so a short outage does not use up a whole third of the lease
        long delay = Math.max(1, Math.min(renewIntervalMillis / 4, 1000));
        if (retryScheduled.compareAndSet(false, true)) {
            scheduler.schedule(() -> {
                retryScheduled.set(false);
                renewAll();
            }, delay, TimeUnit.MILLISECONDS);
        }
    }
}
