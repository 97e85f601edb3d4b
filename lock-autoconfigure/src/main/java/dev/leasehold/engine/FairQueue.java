package dev.leasehold.engine;

/**
 * The timing of the fair queue that waiting instances form in Redis (see {@code queue.lua}): a waiter
 * refreshes its entry at every try, and tries at least every {@link #REFRESH_MILLIS}; an entry that is
 * not refreshed for {@link #ENTRY_MILLIS} is gone (its instance crashed or left), and a grant its instance
 * does not claim within {@link #CLAIM_MILLIS} lapses, so a dead instance delays the queue by seconds at
 * most, never by a lease.
 */
public final class FairQueue {

    public static final long ENTRY_MILLIS = 3000;

    public static final long CLAIM_MILLIS = 3000;

    public static final long REFRESH_MILLIS = 1000;

    /** Fencing tokens an exclusive grant reserves behind its own, for hand-offs inside the holder's JVM. */
    public static final int FENCE_BLOCK = 16;

    private FairQueue() {
    }

    /** The channel on which one waiting instance is told that its turn came. */
    public static String waiterChannel(LockKeys keys, String waiterId) {
        return keys.channel() + ":" + waiterId;
    }
}
