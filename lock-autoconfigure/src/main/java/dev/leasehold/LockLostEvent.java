package dev.leasehold;

import org.springframework.context.ApplicationEvent;

/**
 * Published when a lease was lost while held: renewal was refused or failed until the lease ran out, or a
 * fixed lease expired before release. From then on another owner may hold the key.
 */
public class LockLostEvent extends ApplicationEvent {

    public LockLostEvent(LockHandle handle) {
        super(handle);
    }

    public LockHandle getHandle() {
        return (LockHandle) getSource();
    }
}
