package dev.leasehold.engine.holding;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.key.RenewalVerdict;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.EngineClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the leases of running holders alive and notices lost ones.
 * <p>
 * Watchdog locks are renewed together every third of the lease: one tick starts a round that renews every watched
 * lock in batches ({@link LockServer#renewAll}: on one Redis server a script call renews up to a thousand keys), so a
 * hundred thousand held locks cost a hundred script calls per tick, not a hundred thousand. The round keeps at most
 * two calls on their way (acquires on the same connection never queue behind a whole round), and no tick waits for
 * the answers: they are settled as they come ({@link RenewalAnswers}). A renewal the server refuses (the token no longer owns the key) loses the lock at
 * once; a renewal that fails (Redis unreachable) is retried soon and loses the lock only when the
 * lease ran out unconfirmed; a round not answered within {@code leasehold.redis-timeout} is reported as failing,
 * and its answers still count when they come (Redis did extend the lease). Fixed-lease
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

    private final RenewalAnswers answers;

    /**
     * Renewals sent together ({@link LockServer#renewalsPerCall}: a thousand, the keys of one script call on one Redis
     * server; a thousand per master on a Cluster), asked at the start of each round (watchdog thread only).
     */
    private int chunkSize = 1000;

    /**
     * Renewals on their way at most, in chunks: two keep Redis busy (one is renewed while the answers of the other
     * are settled), and an acquire behind them waits for two script calls (a few ms). With ten, a million held locks
     * kept ten calls queued all the time, and acquiring them took five times as long.
     */
    private static final int WINDOW_CHUNKS = 2;

    /**
     * The round being sent: the held locks not yet looked at, null between rounds (watchdog thread only). Each lock
     * is looked at once, when its chunk is filled: a round with a million locks is one pass over them, not a pass to
     * choose and another to send (each a cache miss per lock).
     */
    private @Nullable Iterator<HeldLock> round;

    /** A tick came while the round was still being sent: it starts once the round is sent. */
    private boolean tickWaiting;

    /** Whether the last round had failures, so an outage is logged once, not on every retry. */
    private volatile boolean failing;

    private volatile @Nullable ScheduledFuture<?> ticks;


    Watchdog(LockServer server, ScheduledExecutorService scheduler, Duration leaseTime, Duration redisTimeout,
            BiConsumer<HeldLock, String> onLost, LockObserver observer, KeyLines lines, Collection<HeldLock> held) {
        this.lines = lines;
        this.held = held;
        this.server = server;
        this.scheduler = scheduler;
        this.redisTimeout = redisTimeout;
        this.renewIntervalMillis = Math.max(1, leaseTime.toMillis() / 3);
        this.renewIntervalNanos = TimeUnit.MILLISECONDS.toNanos(renewIntervalMillis);
        this.answers = new RenewalAnswers(scheduler, this::settleAnswers);
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
     * One tick (or a retry): a round of renewals for every {@linkplain #due due} lock (with a million locks every
     * retry used to send the whole round again, and Redis fell further behind each time). A tick that finds the last
     * round still being sent lets it finish, then starts.
     */
    void renewAll() {
        if (stopped) {
            return;
        }
        if (round != null) {
            tickWaiting = true;
            return;
        }
        answers.forgetOlderThan(renewIntervalNanos, EngineClock.nanoTime());
        try {
            chunkSize = Math.max(1, server.renewalsPerCall());
        }
        catch (RuntimeException ex) {
            // a tick that threw would end the schedule for good: keep the last size
            logger.debug("Could not ask the lock server how many renewals to send at once", ex);
        }
        round = held.iterator();
        sendMore();
    }

    /**
     * Sends the round's next chunks while one more keeps at most {@link #WINDOW_CHUNKS} chunks on their way. A round is not
     * sent all at once: a million renewals queued in Redis at once made every acquire behind them wait seconds (and
     * time out); in chunks, Redis answers them as fast as it can and an acquire waits behind a window at most. The
     * tick does not wait for the answers ({@link RenewalAnswers}): a chunk Redis has not answered within
     * {@code leasehold.redis-timeout} is reported failing by a check at that time.
     */
    private void sendMore() {
        try {
            sendChunks();
        }
        catch (RuntimeException ex) {
            logger.error("Lock renewal tick failed", ex);
            round = null; // what was not sent is due in the retry's round
            retrySoon();
        }
    }

    private void sendChunks() {
        while (!stopped && round != null && answers.onTheirWay() <= (WINDOW_CHUNKS - 1) * chunkSize) {
            List<HeldLock> chunk = new ArrayList<>(chunkSize);
            List<LockServer.Renewal> renewals = new ArrayList<>(chunkSize);
            while (chunk.size() < chunkSize && round.hasNext()) {
                HeldLock lock = round.next();
                if (due(lock)) {
                    chunk.add(lock);
                    renewals.add(new LockServer.Renewal(lock.keys, lock.mode, lock.token, lock.leaseMillis));
                }
            }
            if (!round.hasNext()) {
                round = null;
            }
            if (chunk.isEmpty()) {
                continue;
            }
            long sentAt = (EngineClock.nanoTime() - 1) | 1; // never 0 (no renewal on its way), never after now
            // batched per server (a script call renews up to a thousand keys, each compare-then-extend)
            List<CompletableFuture<Boolean>> replies = server.renewAll(renewals);
            // marked on their way only once sent: a chunk that threw before sending leaves them due for the retry
            // (answers are settled on this thread too, so none is settled before its lock is marked)
            RenewalAnswers.Chunk sent = answers.sent(sentAt, chunk.size());
            for (int i = 0; i < chunk.size(); i++) {
                HeldLock lock = chunk.get(i);
                lock.renewalSentAtNanos(sentAt);
                answers.await(lock, replies.get(i), sent);
            }
            long untilTimeout = redisTimeout.toNanos() - (EngineClock.nanoTime() - sentAt);
            scheduler.schedule(() -> overdue(sent), Math.max(0, untilTimeout), TimeUnit.NANOSECONDS);
        }
        if (round == null && tickWaiting) {
            tickWaiting = false;
            renewAll();
        }
    }

    /**
     * Whether this round renews the lock: watched, and no renewal of it on its way younger than a tick (its answer,
     * however late, settles it: sending another behind it only adds to the queue of a Redis that is already slow; a
     * renewal with no answer for a whole tick, a connection that hangs, is sent again). A lock whose lease ran out
     * while a renewal is still unanswered (Redis gone: the client may hold the command until it reconnects) is lost,
     * not sent again.
     */
    private boolean due(HeldLock lock) {
        if (!lock.watched()) {
            return false;
        }
        long onItsWay = lock.renewalSentAtNanos();
        if (onItsWay == 0) {
            return true;
        }
        long now = EngineClock.nanoTime();
        if (now - lock.leaseEndsAtNanos() >= 0) {
            settle(lock, null, onItsWay);
            return false;
        }
        return now - onItsWay >= renewIntervalNanos;
    }

    /** At {@code leasehold.redis-timeout} after a chunk was sent: answers still missing mean renewals are failing. */
    private void overdue(RenewalAnswers.Chunk chunk) {
        int missing = answers.overdue(chunk);
        if (missing > 0) {
            observer.renewalFailed(missing);
            failing("Redis did not answer in time");
            sendMore();
        }
    }

    private void failing(String why) {
        if (!failing) {
            logger.warn("Renewing held locks failed (" + why + "); retrying until their leases run out");
        }
        failing = true;
    }

    /** Redis answered every renewal the pass settled (and none is overdue). */
    private void recovered(int answers) {
        observer.renewed(answers);
        if (failing) {
            failing = false;
            logger.info("Renewing held locks works again");
        }
    }

    /**
     * On the watchdog's thread: the answers (or failures) that arrived. A failure that confirmed nothing is retried
     * soon; once no round is overdue, the observer hears that renewals work again.
     */
    private void settleAnswers() {
        int[] renewed = { 0, 0 }; // confirmed, failed
        answers.drain(answer -> {
            if (!settle(answer.lock(), answer.renewed(), answer.chunk().sentAtNanos)) {
                renewed[1]++;
            }
            else if (answer.renewed() != null) {
                renewed[0]++;
            }
        });
        sendMore(); // the window has room again
        if (renewed[1] > 0) {
            observer.renewalFailed(renewed[1]);
            failing("Redis refused or dropped the connection");
            retrySoon();
        }
        else if (renewed[0] > 0 && !answers.anyOverdue()) {
            recovered(renewed[0]);
        }
    }

    /**
     * Reports a renewal's answer to its key (sent at {@code sentAt}; null: no answer yet, or an error) and carries out
     * the verdict. False when the lock is still held, unconfirmed and its lease not yet over: it is retried.
     */
    private boolean settle(HeldLock sent, @Nullable Boolean renewed, long sentAt) {
        KeyLine known = sent.line();
        KeyLine line = known != null ? known : lines.line(sent.key());
        RenewalVerdict verdict = line != null ? line.renewalAnswered(sent, renewed, sentAt)
                : RenewalVerdict.offLine(sent, renewed, sentAt);
        HeldLock lose = verdict.lose();
        if (lose != null) {
            lose.watched(false);
            onLost.accept(lose, verdict.reason());
        }
        return verdict.settled();
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
