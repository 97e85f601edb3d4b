package dev.leasehold;

/**
 * How a lock is shared. Readers share a key with each other; a writer excludes readers and writers.
 * {@code EXCLUSIVE} and {@code WRITE} take the same lock: a key locked EXCLUSIVE also keeps readers out.
 */
public enum LockMode {

    /** One owner at a time, no readers; the default. */
    EXCLUSIVE,
    /** Shared with other readers; kept out while a writer holds the key or waits for it. */
    READ,
    /** One owner at a time, no readers: the same lock as {@link #EXCLUSIVE}. */
    WRITE

}
