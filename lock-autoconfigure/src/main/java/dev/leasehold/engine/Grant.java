package dev.leasehold.engine;

/**
 * One server's answer to an acquire: granted with a fencing token, or refused with how long the
 * blocker's lease still runs (the latest a waiter must look again if no release message comes).
 */
public record Grant(boolean granted, long fencingToken, long blockedForMillis) {

    public static Grant granted(long fencingToken) {
        return new Grant(true, fencingToken, 0);
    }

    public static Grant refused(long blockedForMillis) {
        return new Grant(false, 0, Math.max(1, blockedForMillis));
    }
}
