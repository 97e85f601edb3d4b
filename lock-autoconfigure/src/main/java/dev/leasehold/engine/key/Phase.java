package dev.leasehold.engine.key;

/**
 * The states of a key inside this JVM ({@link KeyLine}); which of {@link LineState}'s parts each one has is checked
 * when a state is made. The moves between them: {@link KeyTransitions}.
 */
public enum Phase {

    /** Nobody of this JVM has the key's turn, and nobody waits. */
    FREE(false),

    /** The waiter at the head of the line has the turn and asks Redis; the others wait here, costing Redis nothing. */
    ACQUIRING(false),

    /** An exclusive lock of this JVM (the holder) has the key in Redis, and the turn. */
    HELD(true),

    /**
     * The holder was released with nobody waiting yet: its own thread waits up to the linger for a thread of its
     * turn to come back and take the lock over (the holder's state is RELEASED; the key is still this JVM's in Redis).
     */
    LINGERING(true),

    /**
     * The holder released and handed the lock to the next waiter: the holder is now that waiter's successor lock,
     * whose first step may still confirm it in Redis (a token reservation).
     */
    TAKING_OVER(true),

    /**
     * A lock being taken over was found lost: its waiter still has the turn, and its take-over still ends (then the
     * waiter asks Redis itself). The holder is the lost successor, told to nobody.
     */
    TAKE_OVER_LOST(true),

    /**
     * The engine shuts down while a lock of this JVM still has the key (held, lingering, being taken over, or granted
     * while closing): nothing is handed on; its release, loss or failed take-over ends it.
     */
    CLOSING(true),

    /** The engine shut down: every waiter gets the turn at once (and gives up). */
    CLOSED(false);

    private final boolean hasHolder;

    Phase(boolean hasHolder) {
        this.hasHolder = hasHolder;
    }

    /** Whether a state of this phase has a holder (and only such states have one). */
    boolean hasHolder() {
        return hasHolder;
    }
}
