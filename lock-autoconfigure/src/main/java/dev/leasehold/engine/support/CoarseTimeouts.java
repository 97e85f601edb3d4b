package dev.leasehold.engine.support;

import java.time.Duration;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Time limits that are almost never reached (no reply within {@code leasehold.redis-timeout}), checked by one
 * periodic tick instead of a timer per request: arming one is a queue insert, where a scheduled task costs a
 * lock, a wake-up of the timer's thread and a cancel on every lock and unlock (a fifth of the uncontended cycle's
 * client CPU, measured with async-profiler). A limit fires up to one tick late. The tick runs while limits are
 * armed and stops after a second without any, so an idle engine costs no wake-ups.
 */
public final class CoarseTimeouts implements AutoCloseable {

    /** How late a limit may fire. */
    public static final long TICK_MILLIS = 10;

    private static final int IDLE_TICKS_BEFORE_STOP = 100;

    private record Limit(CompletableFuture<?> watched, long deadlineNanos, Runnable onTimeout) {
    }

    private final StarterThreads threads = new StarterThreads("leasehold-timeouts");

    private final ScheduledThreadPoolExecutor ticker = EngineClock.scheduler(threads);

    private final ConcurrentLinkedQueue<Limit> armed = new ConcurrentLinkedQueue<>();

    private final AtomicBoolean ticking = new AtomicBoolean();

    private volatile boolean closed;

    /** Only the tick reads and writes these. */
    private @Nullable ScheduledFuture<?> ticks;

    private int idleTicks;

    public CoarseTimeouts() {
        ticker.setRemoveOnCancelPolicy(true);
    }

    /**
     * Runs {@code onTimeout} once {@code timeoutNanos} passed, unless {@code watched} completed before (checked at
     * the tick: a watched future that completes is forgotten there).
     */
    public void arm(CompletableFuture<?> watched, long timeoutNanos, Runnable onTimeout) {
        if (watched.isDone()) {
            return;
        }
        if (closed) {
            // after close (a handle closed after its engine): a timer of its own, as before there was a tick
            CompletableFuture.delayedExecutor(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS).execute(() -> {
                if (!watched.isDone()) {
                    onTimeout.run();
                }
            });
            return;
        }
        armed.add(new Limit(watched, EngineClock.nanoTime() + Math.max(0, timeoutNanos), onTimeout));
        if (closed) {
            fireAll(); // close() ran between the check above and the add: its fireAll did not see this limit
            return;
        }
        startTicking();
    }

    /** {@link CompletableFuture#orTimeout} at this granularity: {@code future} fails with a TimeoutException. */
    public <T> CompletableFuture<T> orTimeout(CompletableFuture<T> future, long timeoutNanos) {
        arm(future, timeoutNanos, () -> future.completeExceptionally(new java.util.concurrent.TimeoutException()));
        return future;
    }

    /** Whether the tick runs now (it stops a second after the last limit; tests). */
    boolean ticking() {
        return ticking.get();
    }

    private void startTicking() {
        if (ticking.get() || !ticking.compareAndSet(false, true)) {
            return;
        }
        try {
            ticker.execute(() -> {
                idleTicks = 0;
                ticks = ticker.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
            });
        }
        catch (RejectedExecutionException ex) {
            // closed: what is still armed fires now
            fireAll();
        }
    }

    private void tick() {
        long now = EngineClock.nanoTime();
        boolean any = false;
        for (Iterator<Limit> limits = armed.iterator(); limits.hasNext();) {
            Limit limit = limits.next();
            if (limit.watched.isDone()) {
                limits.remove();
            }
            else if (now - limit.deadlineNanos >= 0) {
                limits.remove();
                run(limit);
            }
            else {
                any = true;
            }
        }
        if (any) {
            idleTicks = 0;
            return;
        }
        if (++idleTicks < IDLE_TICKS_BEFORE_STOP) {
            return;
        }
        Objects.requireNonNull(ticks, "ticking").cancel(false);
        ticking.set(false);
        if (!armed.isEmpty()) {
            startTicking(); // armed just before the flag went down
        }
    }

    private static void run(Limit limit) {
        try {
            limit.onTimeout.run();
        }
        catch (RuntimeException ex) {
            // a completion's own dependents fail on their own; the tick goes on
        }
    }

    private void fireAll() {
        for (Limit limit; (limit = armed.poll()) != null;) {
            if (!limit.watched.isDone()) {
                run(limit);
            }
        }
    }

    /** Stops the tick; limits still armed fire now (everything waiting on them is ending anyway). */
    @Override
    public void close() {
        closed = true;
        threads.stop(ticker, Duration.ofSeconds(1), true);
        fireAll();
    }
}
