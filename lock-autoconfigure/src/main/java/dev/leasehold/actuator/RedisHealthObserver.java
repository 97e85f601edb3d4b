package dev.leasehold.actuator;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.LockObserver;

import org.jspecify.annotations.Nullable;

/**
 * What the engine's own round trips say about Redis, for the health indicator: it learns from acquires
 * and watchdog rounds, so a health check needs no round trip of its own while locking is busy.
 */
public class RedisHealthObserver implements LockObserver {

    private volatile long lastSuccessNanos;

    private volatile long lastFailureNanos;

    private volatile @Nullable Throwable lastError;

    /** Whether the last watchdog round left renewals unconfirmed. */
    private volatile boolean renewalFailing;

    private volatile int locksAtRisk;

    private volatile long failedRenewalRounds;

    private final java.util.concurrent.atomic.AtomicLong lostLocks = new java.util.concurrent.atomic.AtomicLong();

    private volatile boolean everSucceeded;

    @Override
    public void acquired(String key, LockMode mode, long waitedNanos) {
        succeeded();
    }

    @Override
    public void notAcquired(String key, LockMode mode, long waitedNanos, @Nullable Throwable error) {
        if (error == null) {
            succeeded(); // refused: Redis answered
        }
        else {
            failed(error);
        }
    }

    @Override
    public void renewalFailed(int locks) {
        renewalFailing = true;
        locksAtRisk = locks;
        failedRenewalRounds++;
        lastFailureNanos = System.nanoTime();
    }

    @Override
    public void renewed(int locks) {
        renewalFailing = false;
        locksAtRisk = 0;
        succeeded();
    }

    @Override
    public void lost(LockHandle handle, String reason) {
        lostLocks.incrementAndGet();
    }

    void succeeded() {
        everSucceeded = true;
        lastSuccessNanos = System.nanoTime();
    }

    void failed(Throwable error) {
        lastError = error;
        lastFailureNanos = System.nanoTime();
    }

    /** Whether the engine's last round trip succeeded within {@code freshNanos} and nothing failed since. */
    boolean recentlySucceeded(long freshNanos) {
        long success = lastSuccessNanos;
        return everSucceeded && !renewalFailing && System.nanoTime() - success < freshNanos
                && success - lastFailureNanos > 0;
    }

    boolean renewalFailing() {
        return renewalFailing;
    }

    int locksAtRisk() {
        return locksAtRisk;
    }

    long failedRenewalRounds() {
        return failedRenewalRounds;
    }

    long lostLocks() {
        return lostLocks.get();
    }

    @Nullable Throwable lastError() {
        return lastError;
    }
}
