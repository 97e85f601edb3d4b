package dev.leasehold.engine.server;

/**
 * One server's answer to an acquire: granted with a fencing token (and the tokens reserved behind it for
 * hand-offs inside this JVM), or refused with the longest a waiter may sleep before it looks again if no
 * release message comes (the blocker's lease, or the queue's refresh time).
 */
public record Grant(boolean granted, long fencingToken, long blockedForMillis, long reservedThrough) {

    public static Grant granted(long fencingToken) {
        return new Grant(true, fencingToken, 0, fencingToken);
    }

    /** Granted, with the tokens after {@code fencingToken} up to {@code reservedThrough} kept for hand-offs. */
    public static Grant granted(long fencingToken, long reservedThrough) {
        return new Grant(true, fencingToken, 0, Math.max(fencingToken, reservedThrough));
    }

    public static Grant refused(long blockedForMillis) {
        return new Grant(false, 0, Math.max(1, blockedForMillis), 0);
    }
}
