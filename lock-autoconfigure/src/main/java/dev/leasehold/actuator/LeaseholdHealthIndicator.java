package dev.leasehold.actuator;

import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.HeldLockInfo;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code leasehold} health: UP when the engine's last Redis round trip succeeded and the watchdog's
 * renewals are confirmed; DOWN with details (failed renewal rounds, the locks at risk of running out,
 * the last error) when not. A check reuses what the engine's own calls learned within the last renewal
 * interval, and otherwise sends one {@code PING} on the engine's connection (bounded by
 * {@code leasehold.redis-timeout}); it never sends anything else, but for one {@code INFO server} after the first
 * successful check, for the {@code server} detail ({@code valkey 8.0.1}, {@code redis 7.0.15}).
 */
public class LeaseholdHealthIndicator implements HealthIndicator {

    /** Most keys of locks at risk listed in the details. */
    static final int MAX_KEYS_LISTED = 10;

    private final DefaultLockEngine engine;

    private final RedisHealthObserver observer;

    private final long freshNanos;

    /** The server the locks are on, for the details; null in quorum mode (several servers). */
    private final @Nullable RedisServerIdentity server;

    public LeaseholdHealthIndicator(DefaultLockEngine engine, RedisHealthObserver observer) {
        this(engine, observer, null);
    }

    LeaseholdHealthIndicator(DefaultLockEngine engine, RedisHealthObserver observer, @Nullable RedisServerIdentity server) {
        this.engine = engine;
        this.observer = observer;
        this.server = server;
        // what the watchdog learned is fresh for one renewal interval (a third of the lease)
        this.freshNanos = engine.settings().leaseTime().dividedBy(3).toNanos();
    }

    @Override
    public Health health() {
        List<HeldLockInfo> held = engine.heldLockDetails();
        List<HeldLockInfo> renewed = held.stream().filter(HeldLockInfo::renewed).toList();
        if (observer.renewalFailing() && !renewed.isEmpty()) {
            Health.Builder down = Health.down()
                .withDetail("reason", "renewals of held locks are not confirmed by Redis")
                .withDetail("renewalFailures", observer.failedRenewalRounds())
                .withDetail("locksAtRisk", observer.locksAtRisk())
                .withDetail("atRisk", renewed.stream().limit(MAX_KEYS_LISTED)
                    .map(lock -> lock.key() + " (lease left " + lock.leaseLeftMillis() + " ms)").toList());
            return withCommonDetails(down, held).build();
        }
        if (observer.recentlySucceeded(freshNanos)) {
            return withServer(withCommonDetails(Health.up().withDetail("checkedBy", "the engine's last round trip"), held))
                .build();
        }
        try {
            engine.ping().get(engine.settings().redisTimeout().toMillis() + 100, TimeUnit.MILLISECONDS);
            observer.succeeded();
            return withServer(withCommonDetails(Health.up().withDetail("checkedBy", "PING"), held)).build();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return Health.unknown().withDetail("reason", "interrupted").build();
        }
        catch (Exception ex) {
            Throwable cause = ex.getCause() != null ? ex.getCause() : ex;
            observer.failed(cause);
            Health.Builder down = Health.down()
                .withDetail("reason", "Redis did not answer a PING within " + engine.settings().redisTimeout())
                .withDetail("error", String.valueOf(cause));
            return withCommonDetails(down, held).build();
        }
    }

    /** Only when Redis just answered: asking a server that is gone would wait for the driver's timeout. */
    private Health.Builder withServer(Health.Builder builder) {
        String identity = server != null ? server.get() : null;
        return identity != null ? builder.withDetail("server", identity) : builder;
    }

    private Health.Builder withCommonDetails(Health.Builder builder, List<HeldLockInfo> held) {
        builder.withDetail("heldLocks", held.size()).withDetail("lostLocks", observer.lostLocks());
        Throwable lastError = observer.lastError();
        if (lastError != null) {
            builder.withDetail("lastError", String.valueOf(lastError));
        }
        return builder;
    }
}
