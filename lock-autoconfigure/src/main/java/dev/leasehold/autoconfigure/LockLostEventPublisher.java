package dev.leasehold.autoconfigure;

import dev.leasehold.LockHandle;
import dev.leasehold.LockLostEvent;
import dev.leasehold.engine.LockObserver;

import org.springframework.context.ApplicationEventPublisher;

/** Publishes {@link LockLostEvent} when a held lock's lease is lost. */
public class LockLostEventPublisher implements LockObserver {

    private final ApplicationEventPublisher publisher;

    public LockLostEventPublisher(ApplicationEventPublisher publisher) {
        this.publisher = publisher;
    }

    @Override
    public void lost(LockHandle handle, String reason) {
        publisher.publishEvent(new LockLostEvent(handle));
    }
}
