package dev.leasehold.engine;

import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.EngineFixture.ServerKind;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's core behaviour, run once per {@link ServerKind}: it must be the same on the Lettuce server
 * (Spring Boot's default client) and on the RedisTemplate server (Jedis, or any other factory). A test that
 * only makes sense on one kind says why and skips the other.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(ServerKind.class)
abstract class EveryServerEngineTest extends RealRedisEngineTest {

    @Parameter
    ServerKind kind;

    @Override
    ServerKind kind() {
        return kind;
    }

    /** Waits until {@code leases} leases have passed (or the lock was lost before) and checks it is still held. */
    void keepsHolding(LockHandle handle, Duration leaseTime, int leases) {
        long until = System.nanoTime() + leaseTime.multipliedBy(leases).toNanos();
        Await.until(leaseTime.multipliedBy(leases + 2), leases + " leases passed",
                () -> System.nanoTime() - until > 0 || !handle.isHeld() || !fixture.lost.isEmpty());
        assertThat(fixture.lost).as("locks reported lost").isEmpty();
        assertThat(handle.isHeld()).isTrue();
    }
}
