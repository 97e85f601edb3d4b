package dev.leasehold.engine;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/** Keeps a failing observer from breaking locking. */
record SafeLockObserver(LockObserver delegate) implements LockObserver {

    private static final Log logger = LogFactory.getLog(SafeLockObserver.class);

    @Override
    public void acquired(String key, LockMode mode, long waitedNanos) {
        run(() -> delegate.acquired(key, mode, waitedNanos));
    }

    @Override
    public void notAcquired(String key, LockMode mode, long waitedNanos, @Nullable Throwable error) {
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

    @Override
    public void renewed(int locks) {
        run(() -> delegate.renewed(locks));
    }

    @Override
    public Attempt waitStarted(String key, LockMode mode) {
        try {
            Attempt attempt = delegate.waitStarted(key, mode);
            return attempt == null || attempt == Attempt.NONE ? Attempt.NONE : new SafeAttempt(attempt);
        }
        catch (RuntimeException ex) {
            logger.error("LockObserver failed", ex);
            return Attempt.NONE;
        }
    }

    /** Keeps a failing attempt from breaking locking. */
    private record SafeAttempt(Attempt delegate) implements Attempt {

        @Override
        public void granted(long fencingToken) {
            run(() -> delegate.granted(fencingToken));
        }

        @Override
        public void timedOut() {
            run(delegate::timedOut);
        }

        @Override
        public void failed(Throwable error) {
            run(() -> delegate.failed(error));
        }

        @Override
        public void cancelled() {
            run(delegate::cancelled);
        }

        @Override
        public void released() {
            run(delegate::released);
        }

        @Override
        public void lost(String reason) {
            run(() -> delegate.lost(reason));
        }
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
