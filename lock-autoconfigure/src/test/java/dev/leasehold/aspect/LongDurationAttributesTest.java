package dev.leasehold.aspect;

import java.time.Duration;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Long durations in {@code @DistributedLock}: a lease or hold longer than 365 days fails startup naming the
 * attribute (it used to be granted and then lost at once, or fail with ArithmeticException after the grant); a wait
 * of any length is accepted, and from about 146 years on it has no time limit (it used to overflow at the call).
 */
@Timeout(60)
class LongDurationAttributesTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void aLeaseOrHoldLongerThanAYearFailsStartupNamingTheAttribute() {
        AspectContexts.on(redis.server()).withBean(CenturiesLease.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure())).contains(CenturiesLease.class.getName(),
                    "leaseTime '109500d'", "365 days");
        });
        AspectContexts.on(redis.server()).withBean(ForeverHold.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure())).contains(ForeverHold.class.getName(), "holdAtLeast",
                    "365 days");
        });
    }

    @Test
    void aWaitOfForeverAndALeaseOfAYearWork() {
        AspectContexts.on(redis.server()).withBean(LongButValid.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockHandle handle = context.getBean(LongButValid.class).work();
            assertThat(handle.fencingToken()).isPositive();
            assertThat(handle.isHeld()).as("released after the call").isFalse();
            assertThat(handle.wasLost()).as("a lease of a year is not lost at once").isFalse();
        });
    }

    private static String messages(Throwable failure) {
        StringBuilder messages = new StringBuilder();
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            messages.append(cause.getMessage()).append('\n');
        }
        return messages.toString();
    }

    public static class CenturiesLease {

        @DistributedLock(leaseTime = "109500d")
        public void work() {
        }
    }

    public static class ForeverHold {

        @DistributedLock(holdAtLeast = "PT2562047788015215H30M7.999999999S")
        public void work() {
        }
    }

    public static class LongButValid {

        /** {@code ChronoUnit.FOREVER.getDuration()}, written out. */
        @DistributedLock(name = "long-but-valid", waitTime = "PT2562047788015215H30M7.999999999S", leaseTime = "365d")
        public LockHandle work() {
            LockHandle handle = LockContext.current().orElseThrow();
            assertThat(handle.isHeld()).isTrue();
            assertThat(handle.remainingLease()).isGreaterThan(Duration.ofDays(364));
            return handle;
        }
    }
}
