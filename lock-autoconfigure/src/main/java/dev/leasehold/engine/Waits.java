package dev.leasehold.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;

/**
 * The waits of one {@link Acquisition}, one at a time, each bounded by a timer and ended early by a cancel
 * or shutdown ({@link #wakeUp()}), without holding a thread.
 */
final class Waits {

    private final QueueHeadAcquirer context;

    private final BooleanSupplier stopping;

    /** Completing it ends the current wait at once; replaced by every wait. */
    private volatile CompletableFuture<Void> wake = new CompletableFuture<>();

    Waits(QueueHeadAcquirer context, BooleanSupplier stopping) {
        this.context = context;
        this.stopping = stopping;
    }

    /** Ends the current wait now; the acquisition's next step sees why. */
    void wakeUp() {
        wake.complete(null);
    }

    /**
     * Completes (never exceptionally) when {@code event} completes, the time is up, or the acquisition is
     * cancelled or the engine shuts down, whichever comes first. {@code event} may be null: a pure timer.
     */
    CompletableFuture<Void> until(CompletableFuture<?> event, long timeoutNanos) {
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

    private static void cancel(ScheduledFuture<?> timer) {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
