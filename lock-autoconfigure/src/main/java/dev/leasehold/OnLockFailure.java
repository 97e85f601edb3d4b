package dev.leasehold;

/**
 * What an annotated method does when its lock cannot be taken within the wait.
 * {@code SKIP}: the method is not run; it returns null, {@code Optional.empty()}, an empty collection
 * or the primitive default.
 */
public enum OnLockFailure {

    /** Throw a {@link LockAcquisitionException}; the method is not run. The default. */
    THROW,
    /** Do not run the method; return null, {@code Optional.empty()}, an empty collection or the primitive default. */
    SKIP

}
