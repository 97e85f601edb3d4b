package dev.leasehold.observation;

import dev.leasehold.LockMode;

import org.jspecify.annotations.Nullable;

/** The hold of a lock: from the grant until its release or the loss of its lease. */
public class LockHoldContext extends LockObservationContext {

    private final long fencingToken;

    private volatile @Nullable String lostReason;

    public LockHoldContext(String key, String lockName, LockMode mode, long fencingToken) {
        super(key, lockName, mode);
        this.fencingToken = fencingToken;
    }

    public long getFencingToken() {
        return fencingToken;
    }

    /** Why the lease was lost, when the hold ended so; else null. */
    public @Nullable String getLostReason() {
        return lostReason;
    }

    public void setLostReason(@Nullable String lostReason) {
        this.lostReason = lostReason;
    }
}
