package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** {@link LockHandle#extend}, {@link LockHandle#remainingLease} and {@link LockHandle#closeAsync}. */
class LeaseExtensionTest extends RealRedisEngineTest {

    @Test
    void extendingAFixedLeaseKeepsOthersOutPastTheOriginalLease() {
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine other = fixture.engine();
        LockHandle handle = holder.tryLock("batch", Duration.ZERO, Duration.ofMillis(600)).orElseThrow();
        long started = System.nanoTime();

        assertThat(handle.extend(Duration.ofSeconds(5))).isTrue();
        assertThat(handle.remainingLease()).isBetween(Duration.ofSeconds(3), Duration.ofSeconds(5));
        long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{batch}"));
        assertThat(ttl).isBetween(3000L, 5000L);

        // well past the original lease: still held, no loss reported, others kept out
        Await.until(Duration.ofSeconds(5), "the original lease has passed",
                () -> System.nanoTime() - started > Duration.ofMillis(1200).toNanos());
        assertThat(handle.isHeld()).isTrue();
        assertThat(other.tryLock("batch", Duration.ZERO, null)).isEmpty();
        assertThat(fixture.lost).isEmpty();
        handle.close();
        assertThat(redis.server().command("EXISTS", "lock:{batch}")).isEqualTo("0");
    }

    @Test
    void extendingALeaseThatRanOutReturnsFalseAndReportsTheLoss() {
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine other = fixture.engine();
        LockHandle handle = holder.tryLock("short", Duration.ZERO, Duration.ofMillis(200)).orElseThrow();
        LockHandle taken = other.tryLock("short", Duration.ofSeconds(5), Duration.ofSeconds(10)).orElseThrow();

        assertThat(handle.extend(Duration.ofSeconds(5))).isFalse();
        assertThat(handle.isHeld()).isFalse();
        assertThat(handle.remainingLease()).isZero();
        // the new owner's key was not touched
        assertThat(Long.parseLong(redis.server().command("PTTL", "lock:{short}"))).isGreaterThan(5000L);
        Await.until(Duration.ofSeconds(5), "the loss is reported", () -> !fixture.lost.isEmpty());
        taken.close();
        handle.close();
    }

    @Test
    void aServerSideLossIsFoundByExtendEvenBeforeTheLocalEstimateRunsOut() {
        DefaultLockEngine holder = fixture.engine();
        LockHandle handle = holder.tryLock("gone", Duration.ZERO, Duration.ofSeconds(20)).orElseThrow();
        redis.server().command("DEL", "lock:{gone}"); // as an operator's mistake or a failover would
        assertThat(handle.isHeld()).isTrue();
        assertThat(handle.extend(Duration.ofSeconds(20))).isFalse();
        assertThat(handle.isHeld()).isFalse();
        assertThat(redis.server().command("EXISTS", "lock:{gone}")).isEqualTo("0");
        handle.close();
    }

    @Test
    void extendIsForFixedLeasesAndAClosedHandleCannotBeExtended() {
        DefaultLockEngine engine = fixture.engine();
        LockHandle watchdog = engine.lock("watched", Duration.ZERO);
        assertThatIllegalStateException().isThrownBy(() -> watchdog.extend(Duration.ofSeconds(5)))
            .withMessageContaining("watchdog");
        assertThat(watchdog.remainingLease()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
        watchdog.close();
        assertThat(watchdog.remainingLease()).isZero();

        LockHandle fixed = engine.tryLock("fixed", Duration.ZERO, Duration.ofSeconds(5)).orElseThrow();
        fixed.close();
        assertThat(fixed.extend(Duration.ofSeconds(5))).isFalse();
        assertThat(redis.server().command("EXISTS", "lock:{fixed}")).isEqualTo("0");
    }

    @Test
    void closeAsyncReleasesWithoutBlockingAndCompletesOnceDone() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        DefaultLockEngine other = fixture.engine();
        LockHandle handle = engine.lock("async", Duration.ZERO);
        CompletableFuture<Void> done = handle.closeAsync().toCompletableFuture();
        done.get(5, TimeUnit.SECONDS);
        assertThat(handle.isHeld()).isFalse();
        assertThat(redis.server().command("EXISTS", "lock:{async}")).isEqualTo("0");
        other.tryLock("async", Duration.ZERO, null).orElseThrow().close();
        // idempotent
        handle.closeAsync().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
}
