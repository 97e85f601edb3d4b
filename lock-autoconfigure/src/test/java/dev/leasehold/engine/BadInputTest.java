package dev.leasehold.engine;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.LockService;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class BadInputTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static EngineFixture fixture;

    private static LockService locks;

    @BeforeAll
    static void setUp() {
        fixture = new EngineFixture(redis.server());
        locks = fixture.engine();
    }

    @AfterAll
    static void tearDown() {
        fixture.close();
    }

    @Test
    void nullBlankAndOverlongKeysAreRefusedWithTheReason() {
        assertThatThrownBy(() -> locks.tryLock(null, Duration.ZERO, null)).isInstanceOf(LockKeyException.class)
            .hasMessageContaining("null");
        assertThatThrownBy(() -> locks.lock("  ", Duration.ZERO)).isInstanceOf(LockKeyException.class)
            .hasMessageContaining("blank");
        assertThatThrownBy(() -> locks.isLocked("")).isInstanceOf(LockKeyException.class);
        String overlong = "k".repeat(DefaultLockEngine.MAX_KEY_LENGTH + 1);
        assertThatThrownBy(() -> locks.withLock(overlong, Duration.ZERO, () -> "never"))
            .isInstanceOf(LockKeyException.class)
            .hasMessageContaining("at most 1000 characters, was 1001");
        assertThat(locks.tryLock("k".repeat(DefaultLockEngine.MAX_KEY_LENGTH), Duration.ZERO, null)).isPresent()
            .get().satisfies(handle -> handle.close());
    }

    @Test
    void negativeDurationsAreRefusedWithTheValue() {
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ofSeconds(-1), null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("waitTime")
            .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ZERO, Duration.ofMillis(-5)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> locks.tryLock("k", Duration.ZERO, Duration.ZERO))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> locks.tryLock("k", null, null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("waitTime");
        assertThat(locks.isLocked("k")).isFalse();
    }

    @Test
    void keysWithHashTagCharactersStillLockOneSlotAndDoNotCollide() {
        try (var braces = locks.lock("a{b}c", Duration.ZERO); var colon = locks.lock("a:b", Duration.ZERO)) {
            assertThat(redis.server().command("EXISTS", "lock:{a{b}c}")).isEqualTo("1");
            assertThat(locks.isLocked("a{b}c")).isTrue();
            assertThat(locks.isLocked("a{b")).isFalse();
        }
    }

    /**
     * Leases and holds longer than 365 days are refused, naming the argument, before anything reaches Redis. Before
     * the fix a 300-year lease was granted and lost at once (its end overflowed the clock arithmetic) while Redis
     * kept the key for 300 years, and FOREVER as a lease or a hold threw ArithmeticException, the hold after the
     * grant (the key stayed taken).
     */
    @Test
    void leasesAndHoldsLongerThanAYearAreRefusedBeforeAnythingIsSent() {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        Duration centuries = Duration.ofDays(300L * 365);
        Duration justOverAYear = Duration.ofDays(365).plusMillis(1);
        long scriptsBefore = scriptCalls();
        for (Duration tooLong : java.util.List.of(forever, centuries, justOverAYear)) {
            assertThatThrownBy(() -> locks.tryLock("long", Duration.ZERO, tooLong)).as("leaseTime " + tooLong)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime")
                .hasMessageContaining("365 days");
            assertThatThrownBy(() -> locks.tryLock("long", Duration.ZERO, null, tooLong)).as("holdAtLeast " + tooLong)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdAtLeast")
                .hasMessageContaining("365 days");
            assertThatThrownBy(() -> locks.tryLockAsync("long", Duration.ZERO, tooLong)).as("async leaseTime " + tooLong)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        }
        assertThat(scriptCalls()).as("scripts run in Redis for refused calls").isEqualTo(scriptsBefore);
        assertThat(redis.server().command("EXISTS", "lock:{long}")).isEqualTo("0");

        try (LockHandle fixed = locks.tryLock("long", Duration.ZERO, Duration.ofSeconds(30)).orElseThrow()) {
            long scriptsHeld = scriptCalls();
            assertThatThrownBy(() -> fixed.extend(forever)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease").hasMessageContaining("365 days");
            assertThat(scriptCalls()).as("scripts run for a refused extend").isEqualTo(scriptsHeld);
            assertThat(fixed.isHeld()).isTrue();
        }
        assertThat(fixture.lost).as("locks reported lost").isEmpty();
    }

    /** The longest accepted lease, hold and extension keep their promises: held, not lost, in Redis that long. */
    @Test
    void aLeaseAndAHoldOfAYearWork() {
        Duration year = Duration.ofDays(365);
        try (LockHandle handle = locks.tryLock("year", Duration.ofSeconds(5), year, year).orElseThrow()) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(handle.remainingLease()).isGreaterThan(year.minusDays(1));
            assertThat(handle.extend(year)).isTrue();
            assertThat(handle.isHeld()).isTrue();
            assertThat(Long.parseLong(redis.server().command("PTTL", "lock:{year}"))).isGreaterThan(year.minusDays(1).toMillis());
        }
        // the hold keeps the key taken after the release, for the rest of the year
        assertThat(Long.parseLong(redis.server().command("PTTL", "lock:{year}"))).isGreaterThan(year.minusDays(1).toMillis());
        assertThat(fixture.lost).as("locks reported lost").isEmpty();
        redis.server().command("DEL", "lock:{year}");
        // a wait without a time limit is accepted, and a free key is granted at once
        try (LockHandle handle = locks.tryLock("year", ChronoUnit.FOREVER.getDuration(), null).orElseThrow()) {
            assertThat(handle.isHeld()).isTrue();
        }
    }

    /** Script calls Redis has run so far. */
    private static long scriptCalls() {
        return RealRedisEngineTest.scriptCalls(redis.server());
    }
}
