package dev.leasehold.engine.key;

import java.util.List;

/**
 * What the taker of a handed lock carries out after a take-over transition of its {@link KeyLine}: use the lock
 * ({@link Kind#READY}), or give it back in Redis (it holds the key under its owner token while nobody of this JVM has
 * it), or tell the holders before it that the key was gone.
 * @param tell the holders that handed the lock on since Redis last confirmed the lease: told when Redis turns out
 * not to have held it (at once for {@link Kind#KEY_GONE}, else when the give-back is refused)
 */
public record TakeOverStep(Kind kind, HeldLock successor, List<HeldLock> tell) {

    public enum Kind {
        /** Taken over: the successor is HELD, its waiter gets it. */
        READY,
        /** Not taken over: give the successor back now (compare-and-delete); its waiter asks Redis itself. */
        GIVE_BACK,
        /** Not taken over, the reservation unanswered: give it back once that answer came (it tells the holders). */
        GIVE_BACK_AFTER_RESERVATION,
        /** The reservation found the key gone from Redis: nothing to give back; tell the holders. */
        KEY_GONE
    }
}
