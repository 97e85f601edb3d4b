package dev.leasehold;

/** A lock key evaluated to null, empty or otherwise invalid; the guarded code is never run. */
public class LockKeyException extends IllegalArgumentException {

    /**
     * An exception for a key that cannot be locked.
     * @param message what is wrong with the key
     */
    public LockKeyException(String message) {
        super(message);
    }
}
