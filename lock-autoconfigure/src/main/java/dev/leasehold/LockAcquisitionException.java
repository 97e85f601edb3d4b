package dev.leasehold;

import org.jspecify.annotations.Nullable;

/** The lock could not be taken within the wait (held by another owner, or Redis did not answer). */
public class LockAcquisitionException extends RuntimeException {

    /** The logical key that could not be taken. */
    private final String key;

    /**
     * An exception for a lock that could not be taken.
     * @param key the logical key
     * @param message what happened
     */
    public LockAcquisitionException(String key, String message) {
        super(message);
        this.key = key;
    }

    /**
     * An exception for a lock that could not be taken because of another failure.
     * @param key the logical key
     * @param message what happened
     * @param cause the failure, such as a Redis command that timed out
     */
    public LockAcquisitionException(String key, @Nullable String message, @Nullable Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /**
     * The logical key that could not be taken.
     * @return the key as given (before {@code leasehold.key-prefix}); for a multi-lock, the first one that failed
     */
    public String getKey() {
        return key;
    }
}
