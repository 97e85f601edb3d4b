package dev.leasehold.engine.key;

/** What a waiter receives with its turn: nothing (it asks Redis), or a lock handed to it. */
public record Turn(HeldLock handedOver) {

    public static final Turn FREE = new Turn(null);
}
