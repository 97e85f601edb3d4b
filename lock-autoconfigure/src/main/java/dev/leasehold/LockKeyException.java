package dev.leasehold;

/** A lock key evaluated to null, empty or otherwise invalid; the guarded code is never run. */
public class LockKeyException extends IllegalArgumentException {

    public LockKeyException(String message) {
        super(message);
    }
}
