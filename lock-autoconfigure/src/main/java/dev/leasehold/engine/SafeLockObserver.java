package dev.leasehold.engine;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** Keeps a failing observer from breaking locking. */
record SafeLockObserver(LockObserver delegate) implements LockObserver {

    private static final Log logger = LogFactory.getLog(SafeLockObserver.class);

    @Override
    public void acquired(String key, LockMode mode, long waitedNanos) {
        run(() -> delegate.acquired(key, mode, waitedNanos));
    }

    @Override
    public void notAcquired(String key, LockMode mode, long waitedNanos, Throwable error) {
        run(() -> delegate.notAcquired(key, mode, waitedNanos, error));
    }

    @Override
    public void released(String key, LockMode mode, long heldNanos) {
        run(() -> delegate.released(key, mode, heldNanos));
    }

    @Override
    public void lost(LockHandle handle, String reason) {
        run(() -> delegate.lost(handle, reason));
    }

    @Override
    public void renewalFailed(int locks) {
        run(() -> delegate.renewalFailed(locks));
    }

    private static void run(Runnable call) {
        try {
            call.run();
        }
        catch (RuntimeException ex) {
            logger.error("LockObserver failed", ex);
        }
    }
}
