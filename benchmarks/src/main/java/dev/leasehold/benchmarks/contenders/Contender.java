package dev.leasehold.benchmarks.contenders;

import java.time.Duration;

import dev.leasehold.LockMode;

/**
 * One lock implementation under test, behind the single operation every scenario needs, so each scenario
 * is written once for all of them. Implementations are thread-safe; one instance is one Redis client
 * (as one application instance would have).
 */
public interface Contender extends AutoCloseable {

    /** Short id used on the command line and between the two JVMs. */
    String id();

    /** Name shown in the report. */
    String displayName();

    /** Null when it can run here; otherwise why not (reported as "n/a"). */
    default String unavailableReason() {
        return null;
    }

    /** Whether it has a shared (read) lock; contenders without one are n/a in the read/write scenario. */
    boolean supportsReadWrite();

    /**
     * Takes the lock on {@code key} in {@code mode}, waiting up to {@code wait}, runs {@code criticalSection}
     * while holding it and releases it.
     *
     * @return false when the wait ran out (the section did not run)
     */
    boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection) throws Exception;

    @Override
    void close();

    /** The {@link #withLock} of a {@code java.util.concurrent.locks.Lock} (how the peers expose theirs). */
    static boolean withLock(java.util.concurrent.locks.Lock lock, Duration wait, Runnable criticalSection)
            throws InterruptedException {
        if (!lock.tryLock(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            return false;
        }
        try {
            criticalSection.run();
        }
        finally {
            lock.unlock();
        }
        return true;
    }
}
