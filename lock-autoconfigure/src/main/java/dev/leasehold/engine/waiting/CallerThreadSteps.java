package dev.leasehold.engine.waiting;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs the steps of a blocking caller's {@link Acquisition} on the caller's own thread: the caller is
 * blocked anyway, so it runs each step when the wait before it ends (a Redis reply, a release message,
 * its turn, a timer), exactly as a thread looping over blocking waits would.
 */
final class CallerThreadSteps implements Executor {

    private final LinkedBlockingQueue<Runnable> steps = new LinkedBlockingQueue<>();

    @Override
    public void execute(Runnable step) {
        steps.add(step);
    }

    /** Runs steps until {@code result} is done (only a step, run here, completes it). */
    void runUntilDone(CompletableFuture<?> result) throws InterruptedException {
        while (!result.isDone()) {
            steps.take().run();
        }
    }

    /**
     * After a cancel: runs the steps left until the acquisition gave back what it had. A cancel ends every
     * wait at once, so this never waits long; interrupts are ignored meanwhile (the status is kept).
     */
    void finish(Acquisition acquisition) {
        boolean interrupted = Thread.interrupted();
        while (!acquisition.ended()) {
            try {
                Runnable step = steps.poll(10, TimeUnit.MILLISECONDS);
                if (step != null) {
                    step.run();
                }
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
