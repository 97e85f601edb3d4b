package dev.leasehold.engine.key;

import org.jspecify.annotations.Nullable;

/** What a waiter receives with its turn: nothing (it asks Redis), or a lock handed to it. */
public record Turn(@Nullable HeldLock handedOver) {

    public static final Turn FREE = new Turn(null);
}
