package dev.leasehold.engine.holding;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

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
        return !release.done.get() && lock.isHeld();
    }

    @Override
    public void close() {
        release.run();
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock + "]";
    }

    @Override
    public boolean extend(java.time.Duration lease) {
        return !release.done.get() && release.actions.extend(lock, lease);
    }

    @Override
    public boolean wasLost() {
        return lock.lossReported.get();
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
     * handle is dropped without close (it must not reach the handle itself).
     */
    public static final class Release implements Runnable {

        private final AtomicBoolean done = new AtomicBoolean();

        /** Whether this handle still ties the lock to its owner thread for re-entrancy. */
        private final AtomicBoolean threadBound = new AtomicBoolean(true);

        private final HeldLock lock;

        private final HandleActions actions;

        Release(HeldLock lock, HandleActions actions) {
            this.lock = lock;
            this.actions = actions;
        }

        /** Closes and waits for the release (bounded by the Redis timeout). */
        @Override
        public void run() {
            try {
                runAsync().get();
            }
            catch (InterruptedException ex) {
                // the release goes on without us
                Thread.currentThread().interrupt();
            }
            catch (ExecutionException ex) {
                // never: the release reports its own failures
            }
        }

        /** Closes without waiting; completes once the release is done. */
        public CompletableFuture<Void> runAsync() {
            if (done.compareAndSet(false, true)) {
                detach();
                return actions.exit(lock);
            }
            return CompletableFuture.completedFuture(null);
        }

        /** What the view of a lock whose handles were all closed closes: nothing. */
        static Release closed(HeldLock lock, HandleActions actions) {
            Release release = new Release(lock, actions);
            release.done.set(true);
            release.threadBound.set(false);
            return release;
        }

        /** For a lock bound to no thread from the start (taken asynchronously). */
        Release unbound() {
            threadBound.set(false);
            return this;
        }

        public void detach() {
            if (threadBound.compareAndSet(true, false)) {
                actions.unbind(lock);
            }
        }

        /** Run by the cleaner once the handle is unreachable. */
        Runnable onGarbageCollected() {
            return () -> {
                if (!done.get()) {
                    actions.orphaned(lock);
                    run();
                }
            };
        }
    }
}
