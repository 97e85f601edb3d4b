package dev.leasehold;

/** One acquisition of a lock. Closing it releases the lock (the outermost close, when re-entered). */
public interface LockHandle extends AutoCloseable {

    /** The logical key as given (before key-prefix). */
    String key();

    /** Greater than 0, strictly increasing per key across every client and restart of the client. */
    long fencingToken();

    /** False once released, or once the lease was lost (expired, taken, Redis said no). */
    boolean isHeld();

    /** Releases; idempotent; never deletes a lock that another owner holds now. */
    @Override
    void close();
}
