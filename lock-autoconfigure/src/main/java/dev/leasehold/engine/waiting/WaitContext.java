package dev.leasehold.engine.waiting;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import dev.leasehold.engine.support.LockTokens;

import org.jspecify.annotations.Nullable;

/**
 * What the {@link Acquisition}s of one engine share: the server, the keys' lines, the release signals, the locks
 * held, a timer, and the rules for what a waiter leaves behind in Redis (an acquire whose outcome it did not
 * learn, its queue entry).
 */
final class WaitContext {

    /** Waits at least this long have no time limit (see {@link Acquisitions#UNBOUNDED_WAIT_NANOS}). */
    static final long UNBOUNDED_WAIT_NANOS = dev.leasehold.engine.support.DurationLimits.UNBOUNDED_WAIT_NANOS;

    final LockServer server;

    final LockEngineSettings settings;

    final LockTokens tokens;

    final ReleaseSignals signals;

    final KeyLines lines;

    final Holdings holdings;

    final LockObserver observer;

    /** Completes when the engine shuts down: every waiting acquisition wakes and gives up. */
    final CompletableFuture<Void> shutdown;

    private final java.util.Set<CompletableFuture<Boolean>> withdrawing = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Acquisitions asleep until a release message (or the blocker's lease end). */
    final AtomicInteger sleeping = new AtomicInteger();

    /**
     * Wake-ups, and the steps of asynchronous acquisitions (short: each sends a request or gives something
     * back); never the watchdog's thread, whose ticks wait for replies.
     */
    final ScheduledThreadPoolExecutor timer;

    /** Limits on Redis replies (almost never reached): one tick for all of them, no timer per request. */
    final CoarseTimeouts timeouts;

    WaitContext(LockServer server, LockEngineSettings settings, LockTokens tokens, ReleaseSignals signals,
            KeyLines lines, Holdings holdings, LockObserver observer, CompletableFuture<Void> shutdown,
            ScheduledThreadPoolExecutor timer, CoarseTimeouts timeouts) {
        this.server = server;
        this.settings = settings;
        this.tokens = tokens;
        this.signals = signals;
        this.lines = lines;
        this.holdings = holdings;
        this.observer = observer;
        this.shutdown = shutdown;
        this.timer = timer;
        this.timeouts = timeouts;
    }

    /** Runs {@code task} after the delay on the timer; null when it ran at once (the engine is closing). */
    @Nullable ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            task.run();
            return null;
        }
    }

    /** Whether the instance's liveness heartbeat is scheduled (liveness mode of the fair queue). */
    private final java.util.concurrent.atomic.AtomicBoolean heartbeat = new java.util.concurrent.atomic.AtomicBoolean();

    /** Whether a queued waiter slept at the heartbeat's last beat (only the beats read and write it). */
    private volatile boolean sleeperAtLastBeat;

    /**
     * A queued waiter goes to sleep ({@link #sleeping} counted it): in liveness mode ({@link LockServer#queueLiveness})
     * this instance's liveness key is written every refresh interval until no waiter sleeps any more, one write
     * for all of them (their entries in Redis last as long as they sleep, and count while this key does).
     */
    void sleepingInQueue(boolean afterALookThatWroteNoLiveness) {
        if (heartbeat.compareAndSet(false, true)) {
            sleeperAtLastBeat = true; // this sleeper: the first beat writes even if it is awake for its look by then
            // a look of a waiter already queued does not write the key (the heartbeat does): write it at once
            scheduleHeartbeat(afterALookThatWroteNoLiveness ? 0 : settings.fairQueue().refreshInterval().toNanos());
        }
    }

    private void scheduleHeartbeat(long delayNanos) {
        if (schedule(this::beat, delayNanos) == null) {
            heartbeat.set(false);
        }
    }

    private void beat() {
        boolean anyoneSleeps = sleeping.get() > 0;
        // stops only after a whole interval without a sleeper: a waiter awake for its look (which writes no liveness
        // key when it was queued already) is asleep again by then
        if ((!anyoneSleeps && !sleeperAtLastBeat) || shutdown.isDone()) {
            heartbeat.set(false);
            // a waiter that went to sleep just now found the heartbeat still on: start it again for it
            if (sleeping.get() > 0 && !shutdown.isDone()) {
                sleepingInQueue(true);
            }
            return;
        }
        sleeperAtLastBeat = anyoneSleeps;
        try {
            server.keepAlive(dev.leasehold.engine.server.LockKeys.instancePrefix(settings.keyPrefix())
                    + tokens.instanceId(), settings.fairQueue().entryMillis());
        }
        catch (RuntimeException ex) {
            // best effort: the next beat, or the waiters' next tries, write it again
        }
        scheduleHeartbeat(settings.fairQueue().refreshInterval().toNanos());
    }

    /**
     * How long a reply that does not decide the wait (a subscription's confirmation, a queued waiter's look) is
     * awaited: the Redis timeout, never past the wait's deadline, where the last try follows with a timeout of its own.
     */
    long replyWaitNanos(long deadline) {
        return Math.min(settings.redisTimeout().toNanos(), Math.max(0, deadline - EngineClock.nanoTime()));
    }

    /** Takes back whatever the acquire may have granted, once its reply came (or failed). */
    void takeBackAfter(CompletableFuture<Grant> reply, LockKeys keys, LockMode mode, String token) {
        try {
            server.takeBack(reply, keys, mode, token);
        }
        catch (RuntimeException ex) {
            // best effort: what it may have granted expires with its lease
        }
    }

    /**
     * A waiter that leaves without the lock takes back its writer mark, queue entry and unclaimed grant (best
     * effort, after its last try; an entry left behind expires on its own). Returns when the withdrawal has been
     * sent (or the Redis timeout passed without the last try's reply): the queue entry is the instance's, shared by
     * every waiter of this JVM, so the next local waiter tries only after it, or the withdrawal, sent after that
     * waiter's try, would take its entry (and a grant made to it) away.
     */
    CompletableFuture<Void> withdrawAfter(CompletableFuture<Grant> lastReply, LockKeys keys, String waiterId) {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        CompletableFuture<Boolean> withdrawn = lastReply.handle((grant, error) -> null)
            .thenCompose(ignored -> {
                try {
                    return server.withdraw(keys, waiterId);
                }
                finally {
                    sent.complete(null);
                }
            });
        withdrawing.add(withdrawn);
        withdrawn.whenComplete((done, error) -> withdrawing.remove(withdrawn));
        return timeouts.orTimeout(sent, settings.redisTimeout().toNanos()).exceptionally(error -> null);
    }

    /**
     * Withdrawals sent by waiters that gave up: shutdown waits for them (bounded) before the connection goes, or a
     * release would grant the key to this instance's stale queue entry and others would wait out its claim.
     */
    void awaitWithdrawals() {
        try {
            EngineClock.get(CompletableFuture.allOf(withdrawing.toArray(CompletableFuture[]::new)),
                    TimeUnit.MILLISECONDS.toNanos(settings.redisTimeout().toMillis()));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            // what is left expires on its own (the entry within the fair queue's entry timeout)
        }
    }

    static LockAcquisitionException shuttingDown(String key) {
        return new LockAcquisitionException(key, "Could not lock '" + key
                + "': Leasehold is shutting down (the application context is closing)");
    }
}
