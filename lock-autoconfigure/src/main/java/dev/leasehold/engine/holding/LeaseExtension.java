package dev.leasehold.engine.holding;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BiConsumer;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.EngineClock;

/** {@link LockHandle#extend}: more time for a fixed lease, compare-then-extend on the server. */
final class LeaseExtension {

    private final LockServer server;

    private final Duration redisTimeout;

    private final Watchdog watchdog;

    private final BiConsumer<HeldLock, String> onLost;

    LeaseExtension(LockServer server, Duration redisTimeout, Watchdog watchdog, BiConsumer<HeldLock, String> onLost) {
        this.server = server;
        this.redisTimeout = redisTimeout;
        this.watchdog = watchdog;
        this.onLost = onLost;
    }

    /** Compare-then-extend of a fixed lease to {@code lease} from now (see {@link LockHandle#extend}). */
    boolean extend(HeldLock lock, Duration lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, was " + lease + " (key '" + lock.key() + "')");
        }
        dev.leasehold.engine.support.DurationLimits.atMostMaxForKey("lease", lease, lock.key());
        if (lock.renewed) {
            throw new IllegalStateException("The watchdog renews the lease of " + lock
                    + "; extend(Duration) is for locks taken with a fixed leaseTime");
        }
        if (!lock.isHeld()) {
            return false;
        }
        long leaseMillis = Math.max(1, lease.toMillis());
        long sentAt = EngineClock.nanoTime();
        boolean extended;
        try {
            extended = EngineClock.get(server.renew(lock.keys, lock.mode, lock.token, leaseMillis), redisTimeout.toNanos());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LockAcquisitionException(lock.key(), "Interrupted while extending the lease of '" + lock.key()
                    + "'; the lease runs on as before", ex);
        }
        catch (Exception ex) {
            throw new LockAcquisitionException(lock.key(), "Could not extend the lease of '" + lock.key()
                    + "': Redis did not answer within " + redisTimeout + " (" + LockServerException.unwrap(ex)
                    + "); the lease runs on as before", LockServerException.unwrap(ex));
        }
        if (!extended) {
            onLost.accept(lock, "Redis refused to extend the lease: the key expired or is owned by someone else");
            return false;
        }
        watchdog.forget(lock);
        // what the server guarantees of the new lease, as for a grant: in quorum mode less the drift allowance
        lock.extendedAt(sentAt, server.validMillis(leaseMillis));
        if (lock.state() != HeldLock.State.HELD) {
            return false;
        }
        watchdog.watch(lock);
        return true;
    }
}
