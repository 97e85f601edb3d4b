package dev.leasehold;

import org.springframework.context.ApplicationEvent;

/**
 * Published when a lease was lost while held: renewal was refused or failed until the lease ran out, or a
 * fixed lease expired before release. From then on another owner may hold the key.
 */
public class LockLostEvent extends ApplicationEvent {

    /**
     * An event for a lost lease.
     * @param handle the handle whose lease was lost (the event's source)
     */
    public LockLostEvent(LockHandle handle) {
        super(handle);
    }

    /**
     * The handle whose lease was lost; its {@link LockHandle#isHeld()} is already false.
     * @return the handle, with the key and fencing token of the lost lock
     */
    public LockHandle getHandle() {
        return (LockHandle) getSource();
    }
}
