package dev.leasehold.observation;

import dev.leasehold.LockMode;

/** The wait for a lock: from the call until the grant, or until the caller gives up. */
public class LockWaitContext extends LockObservationContext {

    public LockWaitContext(String key, String lockName, LockMode mode) {
        super(key, lockName, mode);
    }
}
