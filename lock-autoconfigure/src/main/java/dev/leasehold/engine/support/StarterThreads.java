package dev.leasehold.engine.support;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Makes the starter's threads (named daemon threads) and stops them so that none outlives the close that
 * stops them: the contract's shutdown rule, no thread of the starter outlives the application context.
 * A step that was running when its executor was shut down may still take a moment (a connect, a reply);
 * {@link #stop} waits for it, bounded, instead of leaving it behind.
 */
public final class StarterThreads implements ThreadFactory {

    private static final Log logger = LogFactory.getLog(StarterThreads.class);

    private static final long AFTER_INTERRUPT_MILLIS = 1000;

    private final String name;

    /** Threads made here and not yet joined: one of them cannot wait for its own executor to end. */
    private final Set<Thread> made = ConcurrentHashMap.newKeySet();

    public StarterThreads(String name) {
        this.name = name;
    }

    @Override
    public Thread newThread(Runnable work) {
        Thread thread = new Thread(work, name);
        thread.setDaemon(true);
        // a pool whose threads end when idle (the deliveries) makes threads all along: forget the ended ones
        made.removeIf(ended -> ended.getState() == Thread.State.TERMINATED);
        made.add(thread);
        return thread;
    }

    /**
     * Shuts {@code executor} (made with this factory) down and waits up to {@code patience} for its threads to
     * end; {@code interrupt} interrupts running tasks and drops queued ones ({@code shutdownNow}). Called from
     * one of its own threads (a listener closing the application), it cannot wait for itself and returns.
     */
    public void stop(ExecutorService executor, Duration patience, boolean interrupt) {
        if (interrupt) {
            executor.shutdownNow();
        }
        else {
            executor.shutdown();
        }
        if (made.contains(Thread.currentThread())) {
            return;
        }
        try {
            if (!executor.awaitTermination(patience.toNanos(), TimeUnit.NANOSECONDS)) {
                executor.shutdownNow(); // past its patience, a step still running is interrupted
                executor.awaitTermination(AFTER_INTERRUPT_MILLIS, TimeUnit.MILLISECONDS);
            }
            // a terminated executor's last thread may still be on its way out: join it, so none is alive after
            for (Thread thread : made) {
                thread.join(AFTER_INTERRUPT_MILLIS);
                if (thread.isAlive()) {
                    logger.warn("Thread '" + name + "' did not end within " + patience + " of close(); it is "
                            + thread.getState() + " in " + java.util.Arrays.toString(thread.getStackTrace()));
                }
                else {
                    made.remove(thread);
                }
            }
        }
        catch (InterruptedException ex) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
