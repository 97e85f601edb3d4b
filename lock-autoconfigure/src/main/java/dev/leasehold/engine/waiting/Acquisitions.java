package dev.leasehold.engine.waiting;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import dev.leasehold.engine.support.LockTokens;
import dev.leasehold.engine.support.StarterThreads;

import org.jspecify.annotations.Nullable;

/**
 * Waiting for locks: starts and tracks {@link Acquisition}s, the one way this engine waits, blocking or not.
 * <p>
 * No acquisition holds a thread while it waits: each step sends a request or schedules a wake-up and returns.
 * The steps of an asynchronous acquisition run on this engine's one wait thread; those of a blocking
 * {@code tryLock} run on its caller's thread, which has nothing else to do ({@link CallerThreadSteps}), so a
 * blocking wait costs no thread beyond its caller's, and every request is sent from the thread that would have
 * sent it before (never from a Redis I/O thread, where a reconnect would hang).
 * <p>
 * An acquire whose outcome a waiter did not learn (no reply in time, a connection reset, a cancel) may still run
 * on the server later and grant the key to nobody. It is taken back by a compare-and-delete sent when its reply
 * future completes ({@link LockServer#takeBack}): the server step completes only after the last command it sent
 * (a NOSCRIPT fallback included), and steps on one connection run in order, so the take-back always runs after
 * whatever the acquire may still do.
 */
public final class Acquisitions implements AutoCloseable {

    /**
     * Waits at least this long (about 146 years) have no time limit; longer ones are cut to it, so a deadline on
     * {@link System#nanoTime()} never overflows ({@code ChronoUnit.FOREVER.getDuration()} works). Such a wait
     * gives up only when Redis could not be reached for a whole lease.
     */
    public static final long UNBOUNDED_WAIT_NANOS = WaitContext.UNBOUNDED_WAIT_NANOS;

    private final WaitContext context;

    private final StarterThreads timerThreads;

    private final Deliveries deliveries = new Deliveries();

    private final Set<Acquisition> live = ConcurrentHashMap.newKeySet();

    /** Set by {@link #close()}: completes once no acquisition is live (each has withdrawn what it left). */
    private volatile @Nullable CompletableFuture<Void> allEnded;

    private final Consumer<Acquisition> ended = acquisition -> {
        live.remove(acquisition);
        CompletableFuture<Void> closing = allEnded;
        if (closing != null && live.isEmpty()) {
            closing.complete(null);
        }
    };

    /** Whether the release channel's connection was asked to open (idempotent: a race only asks twice). */
    private volatile boolean subscriptionsPrepared;

    public Acquisitions(LockServer server, LockEngineSettings settings, LockTokens tokens, KeyLines lines,
            Holdings holdings, LockObserver observer, CompletableFuture<Void> shutdown, CoarseTimeouts timeouts) {
        this.timerThreads = new StarterThreads("leasehold-waits");
        ScheduledThreadPoolExecutor timer = EngineClock.scheduler(timerThreads);
        timer.setRemoveOnCancelPolicy(true);
        ReleaseSignals signals = new ReleaseSignals(server, timer, settings.subscriptionLinger());
        this.context = new WaitContext(server, settings, tokens, signals, lines, holdings, observer, shutdown, timer, timeouts);
        shutdown.thenRun(() -> live.forEach(Acquisition::wakeUp));
    }

    /**
     * Waits for a lock on the calling thread (its steps run there): the lock, or null when the wait ran out.
     * An interrupt gives the wait up (after it gave back its turn and its place in Redis) with a
     * {@link LockAcquisitionException}, unless the lock came at that moment; the interrupt status is kept.
     */
    public @Nullable HeldLock acquire(LockKeys keys, LockMode mode, long waitNanos, @Nullable Long fixedLeaseMillis) {
        CallerThreadSteps steps = new CallerThreadSteps();
        Acquisition acquisition = start(keys, mode, waitNanos, fixedLeaseMillis, Thread.currentThread(), steps);
        try {
            steps.runUntilDone(acquisition.result());
        }
        catch (InterruptedException ex) {
            boolean cancelled = acquisition.cancel();
            steps.finish(acquisition); // gives back its turn and its place in Redis before this thread leaves
            Thread.currentThread().interrupt();
            if (cancelled) {
                throw new LockAcquisitionException(keys.logicalKey(), "Interrupted while waiting for '"
                        + keys.logicalKey() + "'", ex);
            }
            // it ended at that moment: take what it got, and keep the flag
        }
        return AsyncOutcome.now(acquisition.result());
    }

    /**
     * Waits for a lock without holding a thread (steps on the engine's wait thread); see {@link AsyncOutcome}.
     * @param register makes the handle of the granted lock
     */
    public CompletableFuture<Optional<LockHandle>> acquireAsync(LockKeys keys, LockMode mode, long waitNanos,
            @Nullable Long fixedLeaseMillis, Function<HeldLock, LockHandle> register) {
        Acquisition acquisition = start(keys, mode, waitNanos, fixedLeaseMillis, null, null);
        return AsyncOutcome.of(acquisition, register, context.holdings::delivered, deliveries.executor());
    }

    /**
     * @param owner the thread the lock belongs to (re-entrancy), or null for one bound to no thread
     * @param steps where its steps run: the blocking caller's thread, or null for this engine's wait thread
     */
    private Acquisition start(LockKeys keys, LockMode mode, long waitNanos, @Nullable Long fixedLeaseMillis,
            @Nullable Thread owner, @Nullable Executor steps) {
        if (waitNanos > 0 && !subscriptionsPrepared) {
            // the first call that may wait: the release channel's connection opens now, not at its first refusal
            subscriptionsPrepared = true;
            context.server.prepareSubscriptions();
        }
        Acquisition acquisition = new Acquisition(context, keys, mode, waitNanos, fixedLeaseMillis, owner,
                steps != null ? steps : context.timer, ended);
        live.add(acquisition);
        if (context.shutdown.isDone()) {
            acquisition.wakeUp(); // raced with close(): its first step gives up
        }
        acquisition.begin();
        return acquisition;
    }

    /** Acquisitions asleep until a release message now. */
    public int sleeping() {
        return context.sleeping.get();
    }

    public int subscribedChannels() {
        return context.signals.subscribedChannels();
    }

    /** Wakes every waiter asleep on a release message (shutdown): each looks at the engine's state again. */
    public void wakeAll() {
        context.signals.wakeAll();
    }

    /** Unsubscribes, and stops the wait thread once the steps queued now have ended their acquisitions. */
    @Override
    public void close() {
        context.signals.close();
        // steps already queued still run (each ends its acquisition: "shutting down"); wake-ups are dropped
        context.timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timerThreads.stop(context.timer, context.settings.redisTimeout(), false);
        awaitAllEnded();
        context.awaitWithdrawals();
        // the outcomes of the acquisitions just ended are handed over by now; their callers' stages may still run
        deliveries.close(context.settings.redisTimeout());
    }

    /**
     * A blocking caller's steps run on its own thread, not the wait thread stopped above: its acquisition ends (and
     * sends its withdrawal) when that thread runs after the wake-up. Waited for, bounded, or close() returned with
     * the instance still queued in Redis, and a release granted the key to that stale entry: others waited out its
     * claim timeout while the key stood free (the campaign's L1 at 250 ms, seed 7101, an instance restarted).
     */
    private void awaitAllEnded() {
        CompletableFuture<Void> closing = new CompletableFuture<>();
        allEnded = closing;
        if (live.isEmpty()) {
            closing.complete(null);
        }
        try {
            EngineClock.get(closing, TimeUnit.MILLISECONDS.toNanos(context.settings.redisTimeout().toMillis()));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException ex) {
            // a caller thread that does not run within the Redis timeout: its entry expires on its own
        }
    }

    static LockAcquisitionException shuttingDown(String key) {
        return WaitContext.shuttingDown(key);
    }
}
