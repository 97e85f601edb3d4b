package dev.leasehold.engine.holding;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.key.HeldLock;

/** One acquisition or re-entry; closing it gives back one hold of the shared {@link HeldLock}. */
public final class DefaultLockHandle implements LockHandle {

    private final HeldLock lock;

    private final Release release;

    DefaultLockHandle(HeldLock lock, Release release) {
        this.lock = lock;
        this.release = release;
    }

    public HeldLock lock() {
        return lock;
    }

    public Release release() {
        return release;
    }

    @Override
    public String key() {
        return lock.key();
    }

    @Override
    public long fencingToken() {
        return lock.fencingToken();
    }

    @Override
    public boolean isHeld() {
        return !release.done() && lock.isHeld();
    }

    @Override
    public void close() {
        release.close();
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock + "]";
    }

    @Override
    public boolean extend(java.time.Duration lease) {
        return !release.done() && release.actions().extend(lock, lease);
    }

    @Override
    public boolean wasLost() {
        return lock.lossReported();
    }

    @Override
    public java.time.Duration remainingLease() {
        return isHeld() ? java.time.Duration.ofMillis(lock.leaseLeftMillis()) : java.time.Duration.ZERO;
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> closeAsync() {
        return release.runAsync();
    }

    /**
     * What closing does, kept apart from the handle so a {@link java.lang.ref.Cleaner} can run it when a
     * handle is dropped without close (it must not reach the handle itself): its {@link #run()} is that cleaning
     * action. Its two flags are plain fields set by compare-and-set (one object per held lock, not three).
     */
    public static final class Release implements Runnable {

        private static final VarHandle DONE;

        private static final VarHandle THREAD_BOUND;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                DONE = lookup.findVarHandle(Release.class, "done", boolean.class);
                THREAD_BOUND = lookup.findVarHandle(Release.class, "threadBound", boolean.class);
            }
            catch (ReflectiveOperationException ex) {
                throw new ExceptionInInitializerError(ex);
            }
        }

        private volatile boolean done;

        /** Whether this handle still ties the lock to its owner thread for re-entrancy. */
        private volatile boolean threadBound = true;

        private final HeldLock lock;

        private final HandleActions actions;

        Release(HeldLock lock, HandleActions actions) {
            this.lock = lock;
            this.actions = actions;
        }

        boolean done() {
            return done;
        }

        HandleActions actions() {
            return actions;
        }

        /**
         * Closes and waits for the release (bounded by the Redis timeout), whatever the thread's interrupt flag: a
         * caller that unlocks and then locks again must find its release done (a {@code Lock} ignores interrupts in
         * {@code unlock}). The flag is kept: {@code join} waits through an interrupt and sets it again after.
         */
        public void close() {
            try {
                run(true).join();
            }
            catch (CompletionException | CancellationException ex) {
                // never: the release reports its own failures
            }
        }

        /** Closes without waiting (nor lingering for a thread of the turn); completes once the release is done. */
        public CompletableFuture<Void> runAsync() {
            return run(false);
        }

        private CompletableFuture<Void> run(boolean blocking) {
            if (DONE.compareAndSet(this, false, true)) {
                detach();
                return actions.exit(lock, blocking);
            }
            return CompletableFuture.completedFuture(null);
        }

        /** What the view of a lock whose handles were all closed closes: nothing. */
        static Release closed(HeldLock lock, HandleActions actions) {
            Release release = new Release(lock, actions);
            release.done = true;
            release.threadBound = false;
            return release;
        }

        /** For a lock bound to no thread from the start (taken asynchronously). */
        Release unbound() {
            threadBound = false;
            return this;
        }

        public void detach() {
            if (THREAD_BOUND.compareAndSet(this, true, false)) {
                actions.unbind(lock);
            }
        }

        /** Run by the cleaner once the handle is unreachable: closes it, if nobody did. */
        @Override
        public void run() {
            if (!done) {
                actions.orphaned(lock);
                close();
            }
        }
    }
}
