package dev.leasehold;

/**
 * Thrown by {@code unlock()} of the {@link java.util.concurrent.locks.Lock} view ({@link LockService#asLock})
 * when the lock had been lost before (its lease ran out, or Redis lost the key; a {@link LockLostEvent} was
 * published): the calling thread no longer held it, and another owner may have held it meanwhile. The hold
 * is given up all the same, and no key another owner holds is deleted.
 */
public class LockLostException extends IllegalMonitorStateException {

    /** The logical key whose lock was lost. */
    private final String key;

    /**
     * @param key the logical key whose lock was lost
     * @param message what happened, for the reader of a stack trace
     */
    public LockLostException(String key, String message) {
        super(message);
        this.key = key;
    }

    /**
     * The logical key whose lock was lost.
     * @return the key as given to {@code asLock}
     */
    public String getKey() {
        return key;
    }
}
