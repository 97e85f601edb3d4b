package dev.leasehold.engine;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;

/**
 * Starts and tracks {@link Acquisition}s, the one way this engine waits for a lock, and holds what they
 * share: the server, the local gates, the release signals, a timer, and the rules for what a waiter
 * leaves behind in Redis (an acquire whose outcome it did not learn, its queue entry).
 * <p>
 * No acquisition holds a thread while it waits: each step sends a request or schedules a wake-up and
 * returns. The steps of an asynchronous acquisition run on this engine's one wait thread; those of a
 * blocking {@code tryLock} run on its caller's thread, which has nothing else to do ({@link CallerThreadSteps}),
 * so a blocking wait costs no thread beyond its caller's, and every request is sent from the thread that
 * would have sent it before (never from a Redis I/O thread, where a reconnect would hang).
 * <p>
 * An acquire whose outcome a waiter did not learn (no reply in time, a connection reset, a cancel) may
 * still run on the server later and grant the key to nobody. It is taken back by a compare-and-delete
 * sent when its reply future completes: the server step completes only after the last command it sent
 * (a NOSCRIPT fallback included), and steps on one connection run in order, so the take-back always runs
 * after whatever the acquire may still do.
 */
final class QueueHeadAcquirer implements AutoCloseable {

    final LockServer server;

    final LockEngineSettings settings;

    final LockTokens tokens;

    final ReleaseSignals signals;

    final LocalGates gates;

    final LocalHandOff handOff;

    final LockObserver observer;

    /** Completes when the engine shuts down: every waiting acquisition wakes and gives up. */
    final CompletableFuture<Void> shutdown;

    /** Where a lock granted to an acquisition that was cancelled meanwhile goes: released like any other. */
    final Consumer<HeldLock> unclaimed;

    /** Acquisitions asleep until a release message (or the blocker's lease end). */
    final AtomicInteger sleeping = new AtomicInteger();

    private final Set<Acquisition> live = ConcurrentHashMap.newKeySet();

    /**
     * Wake-ups, and the steps of asynchronous acquisitions (short: each sends a request or gives something
     * back); never the watchdog's thread, whose ticks wait for replies.
     */
    private final ScheduledThreadPoolExecutor timer;

    private final StarterThreads timerThreads = new StarterThreads("leasehold-waits");

    QueueHeadAcquirer(LockServer server, LockEngineSettings settings, LockTokens tokens, ReleaseSignals signals,
            LocalGates gates, LocalHandOff handOff, LockObserver observer, CompletableFuture<Void> shutdown,
            Consumer<HeldLock> unclaimed) {
        this.server = server;
        this.settings = settings;
        this.tokens = tokens;
        this.signals = signals;
        this.gates = gates;
        this.handOff = handOff;
        this.observer = observer;
        this.shutdown = shutdown;
        this.unclaimed = unclaimed;
        this.timer = new ScheduledThreadPoolExecutor(1, timerThreads);
        this.timer.setRemoveOnCancelPolicy(true);
        shutdown.thenRun(() -> live.forEach(Acquisition::wakeUp));
    }

    /**
     * Starts waiting for a lock; the acquisition's {@link Acquisition#result()} completes with it, or null
     * when the wait ran out.
     * @param owner the thread the lock belongs to (re-entrancy), or null for one bound to no thread
     * @param steps where its steps run: the blocking caller's thread, or null for this engine's wait thread
     * (an asynchronous acquisition)
     */
    Acquisition start(LockKeys keys, LockMode mode, long waitNanos, Long fixedLeaseMillis, Thread owner,
            java.util.concurrent.Executor steps) {
        Acquisition acquisition = new Acquisition(this, keys, mode, waitNanos, fixedLeaseMillis, owner,
                steps != null ? steps : timer);
        live.add(acquisition);
        if (shutdown.isDone()) {
            acquisition.wakeUp(); // raced with close(): its first step gives up
        }
        acquisition.begin();
        return acquisition;
    }

    void ended(Acquisition acquisition) {
        live.remove(acquisition);
    }

    int sleeping() {
        return sleeping.get();
    }

    /** Runs {@code task} after the delay on the timer; null when it ran at once (the engine is closing). */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            task.run();
            return null;
        }
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
     * A waiter that leaves without the lock takes back its writer mark, queue entry and unclaimed grant
     * (best effort, after its last try; an entry left behind expires on its own).
     */
    void withdrawAfter(CompletableFuture<Grant> lastReply, LockKeys keys, String waiterId) {
        lastReply.handle((grant, error) -> null).thenCompose(ignored -> server.withdraw(keys, waiterId));
    }

    @Override
    public void close() {
        // steps already queued still run (each ends its acquisition: "shutting down"); wake-ups are dropped
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timerThreads.stop(timer, settings.redisTimeout(), false);
    }

    static LockAcquisitionException shuttingDown(String key) {
        return new LockAcquisitionException(key, "Could not lock '" + key
                + "': Leasehold is shutting down (the application context is closing)");
    }

    static String describe(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockServerException) {
            return cause.getMessage();
        }
        return "Redis call failed (" + cause + ")";
    }

    static Throwable unwrap(Throwable ex) {
        return (ex instanceof ExecutionException || ex instanceof CompletionException)
                && ex.getCause() != null ? ex.getCause() : ex;
    }
}
