package dev.leasehold.aspect;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAssert;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;
import dev.leasehold.engine.Await;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code LockAssert}: code that must run under a lock finds out when it does not. */
@Timeout(60)
class LockAssertTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return AspectContexts.on(redis.server()).withBean(Settlements.class).withBean(Batches.class);
    }

    @AfterEach
    void checkAgain() {
        LockAssert.TestHelper.makeAllAssertsPass(false);
    }

    @Test
    void passesUnderTheAnnotationsLockAndFailsWithoutIt() {
        runner().run(context -> {
            Settlements settlements = context.getBean(Settlements.class);
            assertThat(settlements.settleLocked(42)).isEqualTo("settled 42");
            assertThatThrownBy(() -> settlements.settle(42)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'order:42'").hasMessageContaining("does not hold it");
            assertThatThrownBy(() -> settlements.settleUnderTheWrongLock(42)).as("another key's lock")
                .hasMessageContaining("'order:42'");
        });
    }

    @Test
    void anOuterCallsLockCountsInANestedCall() {
        runner().run(context -> assertThat(context.getBean(Batches.class).settleAll(List.of(7L, 8L)))
            .containsExactly("settled 7", "settled 8"));
    }

    @Test
    void passesUnderALockTakenByHandUntilItIsReleased() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            Settlements settlements = context.getBean(Settlements.class);
            assertThat(locks.withLock("order:5", Duration.ofSeconds(5), () -> settlements.settle(5))).isEqualTo("settled 5");
            assertThatThrownBy(() -> settlements.settle(5)).as("after the release").isInstanceOf(IllegalStateException.class);

            try (LockHandle lock = locks.tryLock("order:6", Duration.ofSeconds(5), null).orElseThrow()) {
                assertThatCode(() -> settlements.settle(6)).doesNotThrowAnyException();
                assertThatCode(LockAssert::assertLocked).doesNotThrowAnyException();
                CompletableFuture<Throwable> elsewhere = CompletableFuture.supplyAsync(() -> failure(() -> settlements.settle(6)));
                assertThat(elsewhere.get(10, TimeUnit.SECONDS)).as("another thread does not hold it")
                    .isInstanceOf(IllegalStateException.class);
            }
            assertThatThrownBy(LockAssert::assertLocked).hasMessageContaining("holds none");
        });
    }

    /** A key computed as null names no lock: it fails even while the thread holds others (it used to pass). */
    @Test
    void aNullKeyFailsWhileTheThreadHoldsSomeOtherLock() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            try (LockHandle lock = locks.tryLock("order:12", Duration.ofSeconds(5), null).orElseThrow()) {
                assertThat(lock.isHeld()).isTrue();
                assertThatThrownBy(() -> LockAssert.assertLocked((String) null)).as("held by hand")
                    .isInstanceOf(LockKeyException.class).hasMessageContaining("null key");
            }
            assertThatThrownBy(() -> context.getBean(Settlements.class).settleWithAKeyOfNull(13)).as("under the annotation")
                .isInstanceOf(LockKeyException.class);
        });
    }

    @Test
    void aReadLockCountsAnAsyncOrLostLockDoesNot() {
        runner().run(context -> {
            Settlements settlements = context.getBean(Settlements.class);
            assertThat(settlements.settleReading(9)).isEqualTo("settled 9");

            LockService locks = context.getBean(LockService.class);
            LockHandle async = locks.tryLockAsync("order:10", Duration.ofSeconds(5), null).toCompletableFuture()
                .get(10, TimeUnit.SECONDS).orElseThrow();
            try (async) {
                assertThatThrownBy(() -> settlements.settle(10)).as("bound to no thread")
                    .isInstanceOf(IllegalStateException.class);
            }

            Optional<LockHandle> shortLease = locks.tryLock("order:11", Duration.ofSeconds(5), Duration.ofMillis(200));
            try (LockHandle lease = shortLease.orElseThrow()) {
                Await.until(Duration.ofSeconds(10), "the fixed lease ran out", () -> !lease.isHeld());
                assertThatThrownBy(() -> settlements.settle(11)).as("lost").isInstanceOf(IllegalStateException.class);
            }
        });
    }

    @Test
    void aTestCanMakeEveryAssertPassOnItsThread() throws Exception {
        Settlements settlements = new Settlements(); // a unit test: no Spring, no Redis
        LockAssert.TestHelper.makeAllAssertsPass(true);
        assertThat(settlements.settle(1)).isEqualTo("settled 1");
        assertThat(CompletableFuture.supplyAsync(() -> failure(() -> settlements.settle(1))).get(10, TimeUnit.SECONDS))
            .as("only on the thread that asked").isInstanceOf(IllegalStateException.class);
        LockAssert.TestHelper.makeAllAssertsPass(false);
        assertThatThrownBy(() -> settlements.settle(1)).isInstanceOf(IllegalStateException.class);
    }

    private static Throwable failure(Runnable action) {
        try {
            action.run();
            return null;
        }
        catch (Throwable ex) {
            return ex;
        }
    }

    public static class Settlements {

        public String settle(long orderId) {
            LockAssert.assertLocked("order:" + orderId);
            return "settled " + orderId;
        }

        @DistributedLock(name = "order", key = "#orderId")
        public String settleLocked(long orderId) {
            return settle(orderId);
        }

        @DistributedLock(name = "order", key = "#orderId", mode = LockMode.READ)
        public String settleReading(long orderId) {
            return settle(orderId);
        }

        @DistributedLock(name = "audit", key = "#orderId")
        public String settleAudited(long orderId) {
            LockAssert.assertLocked("audit:" + orderId); // its own lock is the innermost; "order:<id>" an outer one
            return settle(orderId);
        }

        @DistributedLock(name = "order", key = "#orderId")
        public String settleWithAKeyOfNull(long orderId) {
            String forgotten = null; // a key the caller failed to compute
            LockAssert.assertLocked(forgotten);
            return "settled " + orderId;
        }

        @DistributedLock(name = "order", key = "#orderId + 1")
        public String settleUnderTheWrongLock(long orderId) {
            return settle(orderId);
        }
    }

    public static class Batches {

        private final Settlements settlements;

        public Batches(Settlements settlements) {
            this.settlements = settlements;
        }

        @DistributedLock(name = "order", key = "#orderIds")
        public List<String> settleAll(List<Long> orderIds) {
            return orderIds.stream().map(this::audited).toList();
        }

        private String audited(long orderId) {
            return settlements.settleAudited(orderId);
        }
    }
}
