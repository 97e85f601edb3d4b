package dev.leasehold.engine;

import dev.leasehold.LockMode;

/**
 * A lock this instance holds now, for diagnostics (the actuator endpoint).
 * @param leaseLeftMillis local, conservative estimate of the lease still left
 * @param renewed whether the watchdog renews it (false: a fixed lease)
 */
public record HeldLockInfo(String key, LockMode mode, long fencingToken, long heldForMillis, long leaseLeftMillis,
        boolean renewed, String ownerThread, boolean held) {
}
