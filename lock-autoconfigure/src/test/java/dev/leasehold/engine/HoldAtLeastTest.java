package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** {@code holdAtLeast}: the key stays taken until that long after the grant, even when released sooner. */
class HoldAtLeastTest extends RealRedisEngineTest {

    private static final Duration HOLD = Duration.ofMillis(1500);

    @Test
    void aQuickReleaseKeepsTheKeyUntilTheHoldHasPassedAndNoLonger() {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        // connect both first: a fresh client's first connect can take seconds on a loaded machine
        first.isLocked("warm-up");
        second.isLocked("warm-up");
        long started = System.nanoTime();
        LockHandle handle = first.tryLock("report", Duration.ZERO, null, HOLD).orElseThrow();
        handle.close();

        assertThat(handle.isHeld()).isFalse();
        long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{report}"));
        assertThat(ttl).isBetween(1L, HOLD.toMillis());
        assertThat(second.tryLock("report", Duration.ZERO, null)).isEmpty();
        // the holder's own JVM finds it taken too: it is done, not re-entering
        assertThat(first.tryLock("report", Duration.ZERO, null)).isEmpty();

        // a waiter gets it once the hold has passed (woken at the key's expiry, not by a release message)
        LockHandle next = second.tryLock("report", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow();
        long afterMillis = (System.nanoTime() - started) / 1_000_000;
        // at the hold's end, not at the end of the 30 s watchdog lease the key was taken with
        assertThat(afterMillis).isGreaterThanOrEqualTo(HOLD.toMillis()).isLessThan(HOLD.toMillis() + 15_000);
        next.close();
    }

    @Test
    void aJobThatOutlivesTheHoldReleasesAtOnce() throws InterruptedException {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        LockHandle handle = first.tryLock("long", Duration.ZERO, null, Duration.ofMillis(200)).orElseThrow();
        Thread.sleep(300); // the "job" runs longer than the hold
        handle.close();
        assertThat(redis.server().command("EXISTS", "lock:{long}")).isEqualTo("0");
        second.tryLock("long", Duration.ZERO, Duration.ofSeconds(5)).orElseThrow().close();
    }

    @Test
    void aFixedLeaseKeepsItsHoldToo() {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        first.tryLock("fixed", Duration.ZERO, Duration.ofSeconds(10), HOLD).orElseThrow().close();
        long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{fixed}"));
        assertThat(ttl).isBetween(1L, HOLD.toMillis());
        assertThat(second.tryLock("fixed", Duration.ZERO, null)).isEmpty();
    }

    @Test
    void aReadersHoldKeepsWritersOut() {
        DefaultLockEngine reader = fixture.engine();
        DefaultLockEngine writer = fixture.engine();
        long started = System.nanoTime();
        reader.tryLock("doc", LockMode.READ, Duration.ZERO, null, HOLD).orElseThrow().close();
        assertThat(writer.tryLock("doc", LockMode.WRITE, Duration.ZERO, null)).isEmpty();
        LockHandle written = writer.tryLock("doc", LockMode.WRITE, Duration.ofSeconds(10), null).orElseThrow();
        assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(HOLD.toMillis());
        written.close();
    }

    @Test
    void aHoldLongerThanTheFixedLeaseOrNegativeIsRefused() {
        DefaultLockEngine engine = fixture.engine();
        assertThatIllegalArgumentException()
            .isThrownBy(() -> engine.tryLock("k", Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(2)))
            .withMessageContaining("holdAtLeast").withMessageContaining("leaseTime");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> engine.tryLock("k", Duration.ZERO, null, Duration.ofSeconds(-1)))
            .withMessageContaining("holdAtLeast");
        assertThat(redis.server().command("EXISTS", "lock:{k}")).isEqualTo("0");
        Optional<LockHandle> none = engine.tryLock("k", Duration.ZERO, null, Duration.ZERO);
        none.orElseThrow().close();
        assertThat(redis.server().command("EXISTS", "lock:{k}")).isEqualTo("0");
    }
}
