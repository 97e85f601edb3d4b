package dev.leasehold.engine.waiting;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs the steps of a blocking caller's {@link Acquisition} on the caller's own thread: the caller is
 * blocked anyway, so it runs each step when the wait before it ends (a Redis reply, a release message,
 * its turn, a timer), exactly as a thread looping over blocking waits would. One thread takes, any thread
 * gives: a lock-free queue and a park of the caller (no lock and condition per step).
 */
final class CallerThreadSteps implements Executor {

    private static final long FINISH_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ConcurrentLinkedQueue<Runnable> steps = new ConcurrentLinkedQueue<>();

    /** Made on the caller's thread, the one that runs the steps. */
    private final Thread caller = Thread.currentThread();

    @Override
    public void execute(Runnable step) {
        steps.add(step);
        LockSupport.unpark(caller);
    }

    /** Runs steps until {@code result} is done (only a step, run here, completes it); an interrupt ends the wait. */
    void runUntilDone(CompletableFuture<?> result) throws InterruptedException {
        while (!result.isDone()) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            Runnable step = steps.poll();
            if (step != null) {
                step.run();
            }
            else {
                LockSupport.park(this);
            }
        }
    }

    /**
     * After a cancel: runs the steps left until the acquisition gave back what it had. A cancel ends every
     * wait at once, so this never waits long; interrupts are ignored meanwhile (the status is kept).
     */
    void finish(Acquisition acquisition) {
        boolean interrupted = Thread.interrupted();
        while (!acquisition.ended()) {
            Runnable step = steps.poll();
            if (step != null) {
                step.run();
            }
            else {
                LockSupport.parkNanos(this, FINISH_POLL_NANOS);
            }
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
