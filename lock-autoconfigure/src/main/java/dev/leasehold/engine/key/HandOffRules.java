package dev.leasehold.engine.key;

import java.time.Duration;

/**
 * When a releasing holder may hand its lock to the next local waiter instead of releasing it in Redis.
 * @param maxHandOffs hand-offs in one turn before the key goes back through Redis, so other instances get their
 * chance (0: never hand off)
 * @param turnCheck how long a turn hands off without asking Redis whether other instances queue: with long
 * critical sections, a waiting instance then waits about one section more, not a whole block of them
 * @param redisTimeout a lock is handed off only while its lease estimate has more than this left, so the successor's
 * watchdog can renew it in time
 * @param linger how long a release with nobody waiting waits for a thread of the turn to come back before the key
 * goes through Redis (0: not at all)
 */
public record HandOffRules(int maxHandOffs, Duration turnCheck, Duration redisTimeout, Duration linger) {

    /**
     * Whether {@code lock}, released while it was still held, may go to a local waiter after {@code handOffs} in
     * this turn: a watchdog lock without a holdAtLeast still running, with a lease the successor's watchdog can
     * renew before it lapses.
     */
    boolean allow(HeldLock lock, HeldLock.State before, int handOffs) {
        return lock.handOffable && before == HeldLock.State.HELD && handOffs < maxHandOffs
                && lock.holdLeftMillis() == 0 && lock.leaseLeftMillis() > redisTimeout.toMillis();
    }

    long lingerNanos() {
        return linger.toNanos();
    }

    long turnCheckNanos() {
        return turnCheck.toNanos();
    }
}
