package dev.leasehold.engine.server;

import java.time.Duration;
import java.util.Objects;

/**
 * The timing of the fair queue that waiting instances form in Redis (see {@code queue.lua}), and the size of the
 * fencing-token blocks a grant reserves for hand-offs. On one server a waiting instance writes its liveness key
 * every {@code refreshInterval} while any of its waiters sleeps, and a head whose instance wrote none for
 * {@code entryTimeout} is passed over; on a Cluster a waiter refreshes its entry at every try, tries at least every
 * {@code refreshInterval}, and an entry not refreshed for {@code entryTimeout} is gone. A grant its instance does
 * not claim within {@code claimTimeout} lapses, so a dead instance delays the queue by seconds, never by a lease.
 * @param entryTimeout how long a waiting instance counts as alive without a sign of it: its liveness key (one server)
 * or each entry without a refresh (Cluster) ({@code leasehold.fair-queue.entry-timeout})
 * @param claimTimeout how long a grant to the queue's head waits to be claimed ({@code leasehold.fair-queue.claim-timeout})
 * @param refreshInterval how often a waiting instance writes its liveness key and the longest a queue head goes
 * without looking again (one server), the longest a queued instance goes without trying (Cluster)
 * ({@code leasehold.fair-queue.refresh-interval})
 * @param tokenBlock fencing tokens an exclusive grant reserves behind its own, for hand-offs inside the holder's
 * JVM ({@code leasehold.hand-off.token-block})
 */
public record FairQueue(Duration entryTimeout, Duration claimTimeout, Duration refreshInterval, int tokenBlock) {

    /** Today's timing: 3 s entries, 3 s claims, a try at least every second, blocks of 16 tokens. */
    public static final FairQueue DEFAULTS = new FairQueue(Duration.ofSeconds(3), Duration.ofSeconds(3),
            Duration.ofSeconds(1), 16);

    /**
     * The largest {@code leasehold.hand-off.token-block}: fencing tokens stay within a block of µs of the Redis
     * clock, so a restart that loses the counter key keeps them increasing if it takes more than a millisecond.
     */
    public static final int MAX_TOKEN_BLOCK = 1000;

    public FairQueue {
        Objects.requireNonNull(entryTimeout, "entryTimeout");
        Objects.requireNonNull(claimTimeout, "claimTimeout");
        Objects.requireNonNull(refreshInterval, "refreshInterval");
        if (refreshInterval.isNegative() || refreshInterval.isZero()) {
            throw new IllegalArgumentException("leasehold.fair-queue.refresh-interval must be positive, was "
                    + refreshInterval);
        }
        // an entry must outlive the gap between two tries, or a live waiter drops out of the queue
        if (entryTimeout.compareTo(refreshInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("leasehold.fair-queue.entry-timeout (" + entryTimeout
                    + ") must be at least twice leasehold.fair-queue.refresh-interval (" + refreshInterval + ")");
        }
        // a grant whose wake-up was lost is claimed by the next regular try
        if (claimTimeout.compareTo(refreshInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("leasehold.fair-queue.claim-timeout (" + claimTimeout
                    + ") must be at least twice leasehold.fair-queue.refresh-interval (" + refreshInterval + ")");
        }
        // tokens never run more than a block of µs ahead of the server clock (fence.lua), so a Redis restart that
        // loses the counter cannot make them go back as long as it takes longer than a block: a millisecond
        if (tokenBlock < 1 || tokenBlock > MAX_TOKEN_BLOCK) {
            throw new IllegalArgumentException("leasehold.hand-off.token-block must be between 1 and " + MAX_TOKEN_BLOCK
                    + " (fencing tokens never run more than a block of microseconds ahead of the Redis clock, so a"
                    + " restart that lost the counter cannot make them go back), was " + tokenBlock);
        }
    }

    public long entryMillis() {
        return entryTimeout.toMillis();
    }

    public long claimMillis() {
        return claimTimeout.toMillis();
    }

    public long refreshMillis() {
        return refreshInterval.toMillis();
    }

    /** The channel on which one waiting instance is told that its turn came. */
    public static String waiterChannel(LockKeys keys, String waiterId) {
        return keys.channel() + ":" + waiterId;
    }
}
