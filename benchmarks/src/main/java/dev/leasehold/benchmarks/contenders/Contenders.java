package dev.leasehold.benchmarks.contenders;

import java.util.List;

import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/** Every contender by id, in the order of the report. */
public final class Contenders {

    public static final List<String> IDS = List.of(LeaseholdContender.ID, LeaseholdContender.JEDIS_ID,
            AnnotatedLeaseholdContender.ID,
            RedissonContender.ID, RedisLockRegistryContender.PUB_SUB_ID, RedisLockRegistryContender.SPIN_ID,
            FloorContender.ID);

    private Contenders() {
    }

    /**
     * Creates the contender and, when it can run, takes and releases one lock, so that what its library
     * sets up lazily (connections, pub/sub listeners, script cache) is not charged to the first run.
     */
    public static Contender start(String id, Redis redis) {
        Contender contender = create(id, redis);
        if (contender.unavailableReason() == null) {
            try {
                if (!contender.withLock("startup-" + id, dev.leasehold.LockMode.EXCLUSIVE,
                        java.time.Duration.ofSeconds(10), () -> {
                        })) {
                    throw new IllegalStateException(id + " could not take a free lock within 10 s");
                }
            }
            catch (Exception ex) {
                contender.close();
                throw new IllegalStateException(id + " failed its first lock: " + ex, ex);
            }
        }
        return contender;
    }

    private static Contender create(String id, Redis redis) {
        return switch (id) {
            case LeaseholdContender.ID -> new LeaseholdContender(redis);
            case LeaseholdContender.JEDIS_ID -> new LeaseholdContender(redis, true);
            case AnnotatedLeaseholdContender.ID -> new AnnotatedLeaseholdContender(redis);
            case RedissonContender.ID -> new RedissonContender(redis);
            case RedisLockRegistryContender.PUB_SUB_ID -> new RedisLockRegistryContender(redis, RedisLockType.PUB_SUB_LOCK);
            case RedisLockRegistryContender.SPIN_ID -> new RedisLockRegistryContender(redis, RedisLockType.SPIN_LOCK);
            case FloorContender.ID -> new FloorContender(redis);
            default -> throw new IllegalArgumentException("Unknown contender '" + id + "'; known: " + IDS);
        };
    }
}
