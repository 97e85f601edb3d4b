package dev.leasehold;

/**
 * Thrown by {@code unlock()} of the {@link java.util.concurrent.locks.Lock} view ({@link LockService#asLock})
 * when the lock had been lost before (its lease ran out, or Redis lost the key; a {@link LockLostEvent} was
 * published): the calling thread no longer held it, and another owner may have held it meanwhile. The hold
 * is given up all the same, and no key another owner holds is deleted.
 */
public class LockLostException extends IllegalMonitorStateException {

    private final String key;

    public LockLostException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The logical key whose lock was lost. */
    public String getKey() {
        return key;
    }
}
