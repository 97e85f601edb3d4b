package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.FairQueue;

/** {@link DefaultLockEngine#inspect}: one key as Redis sees it, from any client, read-only. */
class KeyInspectionTest extends RealRedisEngineTest {

    @Test
    void aFreeKeyThatWasNeverLockedShowsNothing() {
        KeyState state = fixture.engine().inspect("never");
        assertThat(state).isEqualTo(new KeyState("never", false, null, 0, 0, false, 0));
    }

    @Test
    void anotherClientSeesTheExclusiveHolderItsLeaseAndTheFencingCounter() {
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine observer = fixture.engine();
        try (LockHandle handle = holder.tryLock("seat", Duration.ZERO, Duration.ofSeconds(20)).orElseThrow()) {
            KeyState state = observer.inspect("seat");
            assertThat(state.held()).isTrue();
            assertThat(state.mode()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(state.readers()).isZero();
            assertThat(state.leaseLeftMillis()).isBetween(1L, 20_000L);
            // the grant reserved the tokens behind its own for local hand-offs: the next grant is above them
            assertThat(state.fencingCounter()).isBetween(handle.fencingToken(),
                    handle.fencingToken() + FairQueue.DEFAULTS.tokenBlock() - 1);
            assertThat(state.toString()).doesNotContain("token=");
        }
        KeyState after = observer.inspect("seat");
        assertThat(after.held()).isFalse();
        assertThat(after.mode()).isNull();
        assertThat(after.leaseLeftMillis()).isZero();
        // the counter outlives the lock, so the next grant is still higher
        assertThat(after.fencingCounter()).isPositive();
        try (LockHandle next = holder.lock("seat", Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(after.fencingCounter());
        }
    }

    @Test
    void readersAreCountedAndAWaitingWriterIsShown() throws Exception {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        LockHandle one = first.tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow();
        LockHandle two = second.tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow();
        KeyState state = first.inspect("catalog");
        assertThat(state.mode()).isEqualTo(LockMode.READ);
        assertThat(state.readers()).isEqualTo(2);
        assertThat(state.leaseLeftMillis()).isBetween(1L, EngineFixture.fastSettings().leaseTime().toMillis());
        assertThat(state.fencingCounter()).isEqualTo(two.fencingToken());
        assertThat(state.writerWaiting()).isFalse();

        // a writer waiting for the readers marks itself so; the inspection shows it
        DefaultLockEngine writer = fixture.engine();
        CompletableFuture<Long> written = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = writer.tryLock("catalog", LockMode.WRITE, Duration.ofSeconds(20), null).orElseThrow()) {
                return handle.fencingToken();
            }
        });
        Await.until(Duration.ofSeconds(10), "the writer is seen waiting", () -> first.inspect("catalog").writerWaiting());
        one.close();
        two.close();
        assertThat(written.get(10, TimeUnit.SECONDS)).isGreaterThan(state.fencingCounter());
        assertThat(first.inspect("catalog").held()).isFalse();
    }
}
