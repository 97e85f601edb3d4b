package dev.leasehold.aspect;

import org.jspecify.annotations.Nullable;

/**
 * A {@code @DistributedLock} that cannot work as written, found at startup; {@link #getAction()} says what to
 * do about it (Spring Boot's failure analysis prints both instead of a stack trace).
 */
public class InvalidDistributedLockException extends IllegalStateException {

    static final String FIX_ATTRIBUTE = "Fix the @DistributedLock attribute named above: durations are written like "
            + "500ms, 5s, 1m or PT5S (or ${...} placeholders that resolve to one); key is SpEL over the method's "
            + "parameters (#order.id, #p0) and beans (@name); fallback names a method of the same bean with the "
            + "same parameters (optionally a trailing LockAcquisitionException) and a compatible return type.";

    private final String action;

    InvalidDistributedLockException(String message, String action, @Nullable Throwable cause) {
        super(message, cause);
        this.action = action;
    }

    InvalidDistributedLockException(String message, @Nullable Throwable cause) {
        this(message, FIX_ATTRIBUTE, cause);
    }

    InvalidDistributedLockException(String message) {
        this(message, FIX_ATTRIBUTE, null);
    }

    public String getAction() {
        return action;
    }
}
