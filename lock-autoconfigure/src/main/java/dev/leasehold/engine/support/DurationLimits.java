package dev.leasehold.engine.support;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.lang.Contract;

/**
 * The longest durations the starter accepts, so that every accepted value keeps its promises. A lease ends up in
 * {@link System#nanoTime()} arithmetic (its end, in ns: overflows past 292 years, and a lease that ends "before"
 * it began is lost at once) and in Redis (a {@code PX} in ms, fencing tokens in µs of the server clock next to
 * {@code now + lease} in Lua's doubles, exact below 2^53 µs); a year is far inside all of them and longer than
 * any lease a lock needs. Waits have no such limit: one this long or longer has no time limit at all.
 */
public final class DurationLimits {

    /**
     * The longest lease, hold and timing property: 365 days (a fixed {@code leaseTime}, {@code extend(..)},
     * {@code holdAtLeast}, {@code leasehold.lease-time} and every other {@code leasehold.*} duration but the wait).
     */
    public static final Duration MAX = Duration.ofDays(365);

    /** Waits at least this long (about 146 years) have no time limit; their deadline never overflows. */
    public static final long UNBOUNDED_WAIT_NANOS = Long.MAX_VALUE / 2;

    private DurationLimits() {
    }

    /**
     * Refuses a duration longer than {@link #MAX}, naming it.
     * @param name what the value is ({@code leaseTime}, {@code leasehold.lease-time})
     * @param where appended to the message: which call or key (may be empty)
     * @return the value
     * @throws IllegalArgumentException when it is longer
     */
    @Contract("_, !null, _ -> !null")
    public static @Nullable Duration atMostMax(String name, @Nullable Duration value, String where) {
        if (value != null && value.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(name + " must be at most 365 days (P365D), was " + value + where
                    + ": a longer lease or timing cannot be kept exactly (Redis expiry and fencing arithmetic)");
        }
        return value;
    }

    /**
     * {@link #atMostMax} for an argument of a call on {@code key}: the message is made only when the value is
     * refused (this runs on every lock call with a fixed lease or a hold: no string built when it passes).
     */
    @Contract("_, !null, _ -> !null")
    public static @Nullable Duration atMostMaxForKey(String name, @Nullable Duration value, String key) {
        if (value != null && value.compareTo(MAX) > 0) {
            atMostMax(name, value, " (key '" + key + "')");
        }
        return value;
    }

    /** A wait in nanoseconds, saturated at {@link #UNBOUNDED_WAIT_NANOS} ({@code FOREVER} does not overflow). */
    public static long waitNanos(Duration wait) {
        return wait.compareTo(Duration.ofNanos(UNBOUNDED_WAIT_NANOS)) >= 0 ? UNBOUNDED_WAIT_NANOS : wait.toNanos();
    }
}
