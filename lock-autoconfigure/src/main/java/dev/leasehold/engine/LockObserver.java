package dev.leasehold.engine;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;

import org.jspecify.annotations.Nullable;

/**
 * Told what the engine does, for events, metrics and logs. Every method has a no-op default; the
 * engine calls them on the thread doing the work (lost locks on the watchdog thread), so they must be
 * quick and must not throw (what they throw is logged and ignored).
 */
public interface LockObserver {

    /** A lock was granted after waiting {@code waitedNanos} (re-entries are not reported). */
    default void acquired(String key, LockMode mode, long waitedNanos) {
    }

    /**
     * A lock was not granted within the wait: {@code error} is null when other owners held the key the
     * whole time, else what Redis did wrong.
     */
    default void notAcquired(String key, LockMode mode, long waitedNanos, @Nullable Throwable error) {
    }

    /** A lock was released after being held {@code heldNanos}. */
    default void released(String key, LockMode mode, long heldNanos) {
    }

    /** A held lock's lease was lost: from now on another owner may hold the key. */
    default void lost(LockHandle handle, String reason) {
    }

    /** A watchdog round could not confirm the renewal of {@code locks} locks (they are retried until their lease ends). */
    default void renewalFailed(int locks) {
    }

    /**
     * A watchdog round got Redis's answer to every one of the {@code locks} renewals it sent (the health
     * indicator learns from this that renewals work; a refused renewal is reported through {@link #lost}).
     */
    default void renewed(int locks) {
    }

    /**
     * A wait for {@code key} begins (re-entries are not reported). Called on the thread that asks for the
     * lock, blocking or not ({@code tryLockAsync}), so an observer can take that thread's context, such as
     * its current trace. What it returns follows this one acquisition: how the wait ends and, once granted,
     * how the hold ends. The default follows nothing.
     */
    default Attempt waitStarted(String key, LockMode mode) {
        return Attempt.NONE;
    }

    /**
     * One acquisition, as {@link #waitStarted} saw it begin. The wait ends once: {@link #granted},
     * {@link #timedOut}, {@link #failed} or {@link #cancelled}; a granted lock's hold ends once, at
     * {@link #released} or {@link #lost}, whichever comes first. Called on the engine's threads (or the
     * caller's), so quick and never throwing, like the observer's other methods.
     */
    interface Attempt {

        /** Follows nothing. */
        Attempt NONE = new Attempt() {
        };

        /** The lock was granted with this fencing token: the hold begins now. */
        default void granted(long fencingToken) {
        }

        /** Other owners held the key for the whole wait. */
        default void timedOut() {
        }

        /** The wait ended with an error (Redis failed, or the engine shut down). */
        default void failed(Throwable error) {
        }

        /** The caller gave up waiting (cancelled the stage, or was interrupted). */
        default void cancelled() {
        }

        /** The last handle was closed: the hold is over. */
        default void released() {
        }

        /** The lease was lost while held: the hold is over, whatever the holder still does. */
        default void lost(String reason) {
        }
    }
}
