package dev.leasehold.engine;

import java.time.Duration;
import java.util.Objects;

import dev.leasehold.LockKeyException;
import dev.leasehold.LockMode;
import dev.leasehold.engine.support.DurationLimits;
import dev.leasehold.engine.waiting.Acquisitions;

import org.jspecify.annotations.Nullable;

/** The checks every {@code LockService} call makes on its arguments before anything reaches Redis. */
final class LockArguments {

    /** Longest logical key accepted, in characters. */
    static final int MAX_KEY_LENGTH = 1000;

    /** Waits at least this long have no time limit (see {@link Acquisitions#UNBOUNDED_WAIT_NANOS}). */
    static final long UNBOUNDED_WAIT_NANOS = Acquisitions.UNBOUNDED_WAIT_NANOS;

    private LockArguments() {
    }

    /** The wait in nanoseconds, saturated at {@link #UNBOUNDED_WAIT_NANOS}. */
    static long waitNanos(Duration waitTime) {
        return DurationLimits.waitNanos(waitTime);
    }

    static String validKey(String key) {
        if (key == null) {
            throw new LockKeyException("Lock key must not be null");
        }
        if (key.isBlank()) {
            throw new LockKeyException("Lock key must not be blank, was '" + key + "'");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new LockKeyException("Lock key must be at most " + MAX_KEY_LENGTH
                    + " characters, was " + key.length() + " ('" + key.substring(0, 40) + "...')");
        }
        return key;
    }

    static void check(String key, LockMode mode, Duration waitTime, @Nullable Duration leaseTime) {
        validKey(key);
        Objects.requireNonNull(mode, "mode");
        if (waitTime == null || waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must be zero or positive, was " + waitTime + " (key '" + key + "')");
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero())) {
            throw new IllegalArgumentException("leaseTime must be positive or null for a watchdog lease, was "
                    + leaseTime + " (key '" + key + "')");
        }
        DurationLimits.atMostMaxForKey("leaseTime", leaseTime, key);
    }

    static void checkHold(String key, @Nullable Duration leaseTime, @Nullable Duration holdAtLeast) {
        if (holdAtLeast == null) {
            return;
        }
        if (holdAtLeast.isNegative()) {
            throw new IllegalArgumentException("holdAtLeast must be zero or positive, was " + holdAtLeast
                    + " (key '" + key + "')");
        }
        DurationLimits.atMostMaxForKey("holdAtLeast", holdAtLeast, key);
        if (leaseTime != null && holdAtLeast.compareTo(leaseTime) > 0) {
            throw new IllegalArgumentException("holdAtLeast (" + holdAtLeast + ") must not be longer than the "
                    + "fixed leaseTime (" + leaseTime + ") (key '" + key + "')");
        }
    }
}
