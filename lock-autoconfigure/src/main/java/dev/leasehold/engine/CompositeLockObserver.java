package dev.leasehold.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;

import org.jspecify.annotations.Nullable;

/** Tells several observers, in order. */
public final class CompositeLockObserver implements LockObserver {

    private final List<LockObserver> observers;

    public CompositeLockObserver(List<? extends LockObserver> observers) {
        this.observers = List.copyOf(observers);
    }

    @Override
    public void acquired(String key, LockMode mode, long waitedNanos) {
        observers.forEach(observer -> observer.acquired(key, mode, waitedNanos));
    }

    @Override
    public void notAcquired(String key, LockMode mode, long waitedNanos, @Nullable Throwable error) {
        observers.forEach(observer -> observer.notAcquired(key, mode, waitedNanos, error));
    }

    @Override
    public void released(String key, LockMode mode, long heldNanos) {
        observers.forEach(observer -> observer.released(key, mode, heldNanos));
    }

    @Override
    public void lost(LockHandle handle, String reason) {
        observers.forEach(observer -> observer.lost(handle, reason));
    }

    @Override
    public void renewalFailed(int locks) {
        observers.forEach(observer -> observer.renewalFailed(locks));
    }

    @Override
    public void renewed(int locks) {
        observers.forEach(observer -> observer.renewed(locks));
    }

    @Override
    public Attempt waitStarted(String key, LockMode mode) {
        List<Attempt> attempts = new ArrayList<>(observers.size());
        for (LockObserver observer : observers) {
            Attempt attempt = observer.waitStarted(key, mode);
            if (attempt != null && attempt != Attempt.NONE) {
                attempts.add(attempt);
            }
        }
        return attempts.isEmpty() ? Attempt.NONE : attempts.size() == 1 ? attempts.get(0) : new Attempts(attempts);
    }

    /** Tells the attempts of several observers, in order. */
    private record Attempts(List<Attempt> attempts) implements Attempt {

        @Override
        public void granted(long fencingToken) {
            tell(attempt -> attempt.granted(fencingToken));
        }

        @Override
        public void timedOut() {
            tell(Attempt::timedOut);
        }

        @Override
        public void failed(Throwable error) {
            tell(attempt -> attempt.failed(error));
        }

        @Override
        public void cancelled() {
            tell(Attempt::cancelled);
        }

        @Override
        public void released() {
            tell(Attempt::released);
        }

        @Override
        public void lost(String reason) {
            tell(attempt -> attempt.lost(reason));
        }

        private void tell(Consumer<Attempt> call) {
            attempts.forEach(call);
        }
    }
}
