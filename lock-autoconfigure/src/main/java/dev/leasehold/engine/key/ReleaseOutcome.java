package dev.leasehold.engine.key;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * How a release went ({@link KeyLine#release}): handed to {@code successor}, or released in Redis (null), with the
 * holders since Redis last confirmed the lease.
 */
public record ReleaseOutcome(@Nullable HeldLock successor, List<HeldLock> unconfirmed) {

    static final ReleaseOutcome NOT_THE_HOLDER = new ReleaseOutcome(null, List.of());

    /** A plain release in Redis: one object for all of them. */
    public static final ReleaseOutcome IN_REDIS = new ReleaseOutcome(null, List.of());

    public boolean handedOff() {
        return successor != null;
    }
}
