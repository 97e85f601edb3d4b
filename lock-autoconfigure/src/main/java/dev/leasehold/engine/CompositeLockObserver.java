package dev.leasehold.engine;

import java.util.List;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;

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
    public void notAcquired(String key, LockMode mode, long waitedNanos, Throwable error) {
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
}
