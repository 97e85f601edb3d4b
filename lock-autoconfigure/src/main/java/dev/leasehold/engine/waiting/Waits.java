package dev.leasehold.engine.waiting;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The waits of one {@link Acquisition}, one at a time, each bounded by a timer and ended early by a cancel
 * or shutdown ({@link #wakeUp()}), without holding a thread; and the step that runs after each, on the
 * acquisition's own executor.
 */
final class Waits {

    private final WaitContext context;

    private final BooleanSupplier stopping;

    /** Completing it ends the current wait at once; replaced by every wait. */
    private volatile CompletableFuture<Void> wake = new CompletableFuture<>();

    /** Where steps run: the blocking caller's own thread ({@link CallerThreadSteps}), or the engine's. */
    private final Executor steps;

    /** Told when a step threw (a bug). */
    private final Consumer<Throwable> failed;

    Waits(WaitContext context, BooleanSupplier stopping, Executor steps, Consumer<Throwable> failed) {
        this.context = context;
        this.stopping = stopping;
        this.steps = steps;
        this.failed = failed;
    }

    /** Runs {@code next} once {@code wait} is over. */
    void then(CompletableFuture<Void> wait, Runnable next) {
        wait.whenComplete((ignored, error) -> dispatch(next));
    }

    /** Runs {@code next} with the outcome once it is in. */
    <T> void thenWith(CompletableFuture<T> outcome, Consumer<T> next) {
        outcome.whenComplete((value, error) -> dispatch(() -> {
            if (error != null) {
                throw new IllegalStateException("a step failed", error);
            }
            next.accept(value);
        }));
    }

    /**
     * The next step runs on the acquisition's own executor, never on the thread that ended the wait: that
     * may be a Redis I/O thread, where a step that has to reconnect (a blocking connect) would hang.
     */
    private void dispatch(Runnable next) {
        try {
            steps.execute(() -> run(next));
        }
        catch (RejectedExecutionException ex) {
            run(next); // the engine closed: the step only ends the acquisition
        }
    }

    /** Runs one step here and now; a step that throws ends the acquisition. */
    void run(Runnable next) {
        try {
            next.run();
        }
        catch (RuntimeException | Error ex) {
            failed.accept(ex);
        }
    }

    /** Ends the current wait now; the acquisition's next step sees why. */
    void wakeUp() {
        wake.complete(null);
    }

    /**
     * Completes (never exceptionally) when {@code event} completes, the time is up, or the acquisition is
     * cancelled or the engine shuts down, whichever comes first. {@code event} may be null: a pure timer.
     */
    CompletableFuture<Void> until(@Nullable CompletableFuture<?> event, long timeoutNanos) {
        CompletableFuture<Void> wakeUp = new CompletableFuture<>();
        wake = wakeUp;
        // read after publishing `wake`: a cancel or shutdown either sees it, or is seen here
        if (stopping.getAsBoolean() || timeoutNanos <= 0 || (event != null && event.isDone())) {
            wakeUp.complete(null);
            return wakeUp;
        }
        ScheduledFuture<?> timer = context.schedule(() -> wakeUp.complete(null), timeoutNanos);
        if (event == null) {
            return wakeUp.whenComplete((ignored, error) -> cancel(timer));
        }
        // either-of: the branch on the event that did not fire is dropped from it, so long-lived events
        // (a channel's next release) do not collect dead waiters
        return event.runAfterEither(wakeUp, () -> {
        }).handle((ignored, error) -> {
            cancel(timer);
            return null;
        });
    }

    /**
     * {@link #until} for a Redis reply, whose limit ({@code leasehold.redis-timeout}) is almost never reached: on
     * the engine's coarse timeouts rather than a timer of its own (it fires up to a tick late).
     */
    CompletableFuture<Void> untilReply(CompletableFuture<?> reply, long timeoutNanos) {
        CompletableFuture<Void> wakeUp = new CompletableFuture<>();
        wake = wakeUp;
        if (stopping.getAsBoolean() || timeoutNanos <= 0 || reply.isDone()) {
            wakeUp.complete(null);
            return wakeUp;
        }
        CompletableFuture<Void> either = reply.runAfterEither(wakeUp, () -> {
        });
        context.timeouts.arm(either, timeoutNanos, () -> wakeUp.complete(null));
        // never exceptionally: the step looks at the reply itself
        return either.exceptionally(error -> null);
    }

    private static void cancel(@Nullable ScheduledFuture<?> timer) {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
