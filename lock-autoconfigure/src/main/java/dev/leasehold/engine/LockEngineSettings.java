package dev.leasehold.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine needs to know.
 * @param keyPrefix prepended to every logical key in Redis
 * @param leaseTime lease of watchdog-renewed locks (renewed every third of it)
 * @param redisTimeout upper bound on any single Redis call
 * @param subscriptionLinger how long a channel stays subscribed after its last local waiter left
 */
public record LockEngineSettings(String keyPrefix, Duration leaseTime, Duration redisTimeout,
        Duration subscriptionLinger) {

    public LockEngineSettings {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        requirePositive(leaseTime, "leaseTime");
        requirePositive(redisTimeout, "redisTimeout");
        Objects.requireNonNull(subscriptionLinger, "subscriptionLinger");
        if (subscriptionLinger.isNegative()) {
            throw new IllegalArgumentException("subscriptionLinger must not be negative, was " + subscriptionLinger);
        }
    }

    public static LockEngineSettings defaults() {
        return new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofSeconds(2), Duration.ofSeconds(2));
    }

    public LockEngineSettings withLeaseTime(Duration leaseTime) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger);
    }

    public LockEngineSettings withRedisTimeout(Duration redisTimeout) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger);
    }

    public LockEngineSettings withKeyPrefix(String keyPrefix) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger);
    }

    public LockEngineSettings withSubscriptionLinger(Duration subscriptionLinger) {
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger);
    }

    private static void requirePositive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
