package dev.leasehold.engine;

import java.time.Duration;
import java.util.Objects;

import dev.leasehold.engine.server.FairQueue;

/**
 * What the engine needs to know.
 * @param keyPrefix prepended to every logical key in Redis
 * @param leaseTime lease of watchdog-renewed locks (renewed every third of it)
 * @param redisTimeout upper bound on any single Redis call
 * @param subscriptionLinger how long a channel stays subscribed after its last local waiter left
 * @param fairQueue the timing of the fair queue of waiting instances in Redis, and the token block size
 * @param handOff the bounds of a turn of local hand-offs
 */
public record LockEngineSettings(String keyPrefix, Duration leaseTime, Duration redisTimeout,
        Duration subscriptionLinger, FairQueue fairQueue, HandOff handOff) {

    public LockEngineSettings {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        requirePositive(leaseTime, "leaseTime");
        requirePositive(redisTimeout, "redisTimeout");
        Objects.requireNonNull(subscriptionLinger, "subscriptionLinger");
        if (subscriptionLinger.isNegative()) {
            throw new IllegalArgumentException("subscriptionLinger must not be negative, was " + subscriptionLinger);
        }
        Objects.requireNonNull(fairQueue, "fairQueue");
        Objects.requireNonNull(handOff, "handOff");
    }

    /** With today's fair-queue timing and hand-off bounds. */
    public LockEngineSettings(String keyPrefix, Duration leaseTime, Duration redisTimeout, Duration subscriptionLinger) {
        this(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, FairQueue.DEFAULTS, HandOff.DEFAULTS);
    }

    public static LockEngineSettings defaults() {
        return new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofSeconds(2), Duration.ofSeconds(2));
    }

    public LockEngineSettings withLeaseTime(Duration leaseTime) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    public LockEngineSettings withRedisTimeout(Duration redisTimeout) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    public LockEngineSettings withKeyPrefix(String keyPrefix) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    public LockEngineSettings withSubscriptionLinger(Duration subscriptionLinger) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    public LockEngineSettings withFairQueue(FairQueue fairQueue) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    public LockEngineSettings withHandOff(HandOff handOff) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, fairQueue, handOff);
    }

    private static void requirePositive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }

    /**
     * The bounds of a turn of local hand-offs (a releasing holder passing its lock to the next thread of this JVM
     * without Redis).
     * @param maxTurn hand-offs in one turn before the key goes back through Redis, so that other instances get
     * their chance ({@code leasehold.hand-off.max-turn}; 0 turns local hand-off off)
     * @param turnCheck how long a turn hands off without asking Redis whether other instances queue, and once they
     * do, how long after the grant a thread of this JVM may still join the turn ({@code leasehold.hand-off.turn-check})
     * @param linger how long a thread releasing a lock that other threads of this JVM used in its turn waits, when
     * none waits yet, for one to come back before the key goes through Redis ({@code leasehold.hand-off.linger};
     * 0 turns it off)
     */
    public record HandOff(int maxTurn, Duration turnCheck, Duration linger) {

        /**
         * Today's bounds: 64 hand-offs, a check after 25 ms. Another instance waits about a turn per instance ahead
         * of it: with four instances of two threads and 1 ms sections, 50 ms gave a p99 wait of 161 ms (Redisson's
         * 110-130), 25 ms 85 ms; 10 ms gave 43 ms but tripled the median wait of two JVMs of eight threads (33 ms
         * against 10) and the Redis commands per acquisition.
         */
        public static final HandOff DEFAULTS = new HandOff(64, Duration.ofMillis(25), Duration.ofNanos(100_000));

        /** The default linger (100 µs): long enough for a descheduled thread to get its core back, far below a
         * turn change through Redis. */
        public HandOff(int maxTurn, Duration turnCheck) {
            this(maxTurn, turnCheck, DEFAULTS.linger());
        }

        public HandOff {
            if (maxTurn < 0) {
                throw new IllegalArgumentException("leasehold.hand-off.max-turn must be 0 or more, was " + maxTurn);
            }
            Objects.requireNonNull(turnCheck, "turnCheck");
            if (turnCheck.isNegative() || turnCheck.isZero()) {
                throw new IllegalArgumentException("leasehold.hand-off.turn-check must be positive, was " + turnCheck);
            }
            Objects.requireNonNull(linger, "linger");
            if (linger.isNegative() || linger.compareTo(turnCheck) > 0) {
                throw new IllegalArgumentException("leasehold.hand-off.linger must be 0 or more and at most the turn check ("
                        + turnCheck + "), was " + linger);
            }
        }
    }
}
