package dev.leasehold.engine.waiting;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.leasehold.engine.support.EngineClock;
import dev.leasehold.engine.support.StarterThreads;

/**
 * The engine's threads that complete {@code tryLockAsync} stages ({@code leasehold-deliveries}): reused from one
 * delivery to the next, one more whenever every one of them is busy (a caller's dependent stage may block), each
 * ending after {@link #IDLE} without work, and all of them by the end of {@link #close}.
 * <p>
 * Not the {@code CompletableFuture} default async pool: on a machine of two CPUs or fewer (a small container) the
 * JDK runs each of its tasks on a thread started for it, and a thread start costs more the more threads the JVM
 * has; with 5,000 blocked callers beside 5,000 async waiters the engine's wait thread spent most of its time
 * starting them, and async grants came hundreds of milliseconds after the release (the scale benchmark).
 */
final class Deliveries {

    private static final Duration IDLE = Duration.ofSeconds(10);

    private final StarterThreads threads = new StarterThreads("leasehold-deliveries");

    private final ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE.toMillis(),
            TimeUnit.MILLISECONDS, new SynchronousQueue<>(), threads);

    /** Where stages complete: this pool, or the explorer's virtual clock when one is installed. */
    private final Executor executor = EngineClock.deliveries(pool);

    Executor executor() {
        return executor;
    }

    /**
     * Lets the deliveries handed over so far run, then ends the threads, waiting up to {@code patience} for a
     * caller's stage that blocks; a delivery handed over after this runs on the thread that hands it over.
     */
    void close(Duration patience) {
        threads.stop(pool, patience, false);
    }
}
