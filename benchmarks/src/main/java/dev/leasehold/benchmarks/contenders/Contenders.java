package dev.leasehold.benchmarks.contenders;

import java.util.List;

import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/** Every contender by id, in the order of the report. */
public final class Contenders {

    public static final List<String> IDS = List.of(LeaseholdContender.ID, AnnotatedLeaseholdContender.ID,
            RedissonContender.ID, RedisLockRegistryContender.PUB_SUB_ID, RedisLockRegistryContender.SPIN_ID,
            FloorContender.ID);

    private Contenders() {
    }

    public static Contender create(String id, Redis redis) {
        return switch (id) {
            case LeaseholdContender.ID -> new LeaseholdContender(redis);
            case AnnotatedLeaseholdContender.ID -> new AnnotatedLeaseholdContender(redis);
            case RedissonContender.ID -> new RedissonContender(redis);
            case RedisLockRegistryContender.PUB_SUB_ID -> new RedisLockRegistryContender(redis, RedisLockType.PUB_SUB_LOCK);
            case RedisLockRegistryContender.SPIN_ID -> new RedisLockRegistryContender(redis, RedisLockType.SPIN_LOCK);
            case FloorContender.ID -> new FloorContender(redis);
            default -> throw new IllegalArgumentException("Unknown contender '" + id + "'; known: " + IDS);
        };
    }
}
