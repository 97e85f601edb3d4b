package dev.leasehold;

/**
 * How a lock is shared. Readers share a key with each other; a writer excludes readers and writers.
 * {@code EXCLUSIVE} and {@code WRITE} take the same lock: a key locked EXCLUSIVE also keeps readers out.
 */
public enum LockMode {

    EXCLUSIVE, READ, WRITE

}
