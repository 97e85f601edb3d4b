package dev.leasehold;

/** The lock could not be taken within the wait (held by another owner, or Redis did not answer). */
public class LockAcquisitionException extends RuntimeException {

    private final String key;

    public LockAcquisitionException(String key, String message) {
        super(message);
        this.key = key;
    }

    public LockAcquisitionException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /** The logical key that could not be taken (for a multi-lock, the first one that failed). */
    public String getKey() {
        return key;
    }
}
