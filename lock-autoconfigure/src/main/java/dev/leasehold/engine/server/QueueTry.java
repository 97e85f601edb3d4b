package dev.leasehold.engine.server;

/**
 * What one try of an acquisition does with the key's fair queue, on a server that
 * {@link LockServer#queuesWaiters() queues waiters}.
 */
public enum QueueTry {

    /** A single try (no wait), or a server without a queue: a refused try leaves nothing behind. */
    NONE,

    /** A try that joins the queue when it is refused (or claims the key when a release granted it). */
    JOIN,

    /**
     * A later try of a waiter whose last try joined the queue: it keeps its place (or claims its grant). Its own entry
     * makes the key contended, so the script skips the uncontended path's look (a command on every head's look).
     */
    QUEUED;

    /** Whether a refused try joins or keeps its place in the queue. */
    public boolean joins() {
        return this != NONE;
    }
}
