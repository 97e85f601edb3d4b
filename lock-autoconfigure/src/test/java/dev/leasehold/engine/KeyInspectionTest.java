package dev.leasehold.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.server.KeyState.QueuedInstance;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;

import static org.assertj.core.api.Assertions.assertThat;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;

/** {@link DefaultLockEngine#inspect}: one key as Redis sees it, from any client, read-only. */
class KeyInspectionTest extends EveryServerEngineTest {

    @Test
    void aFreeKeyThatWasNeverLockedShowsNothing() {
        KeyState state = fixture.engine().inspect("never");
        assertThat(state).isEqualTo(new KeyState("never", false, null, 0, 0, false, 0));
    }

    @Test
    void anotherClientSeesTheExclusiveHolderItsLeaseAndTheFencingCounter() {
        DefaultLockEngine holder = fixture.engine();
        DefaultLockEngine observer = fixture.engine();
        long reservedThrough;
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
            reservedThrough = state.fencingCounter();
        }
        KeyState after = observer.inspect("seat");
        assertThat(after.held()).isFalse();
        assertThat(after.mode()).isNull();
        assertThat(after.leaseLeftMillis()).isZero();
        // the next grant is above every token handed out before (the clock has passed the block, or a counter
        // key kept it)
        try (LockHandle next = holder.lock("seat", Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(reservedThrough);
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

    @Test
    void theHolderAndTheInstancesQueuedForTheKeyAreShownInTheirOrderNeverAnOwnerToken() throws Exception {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        DefaultLockEngine third = fixture.engine();
        LockHandle held = first.tryLock("show:1", Duration.ZERO, null).orElseThrow();
        KeyState alone = third.inspect("show:1");
        assertThat(alone.holders()).containsExactly(first.instanceId());
        assertThat(alone.queue()).isEmpty();

        CompletableFuture<LockHandle> secondGets = waitFor(second, "show:1");
        Await.until(Duration.ofSeconds(10), "the second instance is queued",
                () -> !third.inspect("show:1").queue().isEmpty());
        CompletableFuture<LockHandle> thirdGets = waitFor(third, "show:1");
        Await.until(Duration.ofSeconds(10), "both are queued, in the order they came", () -> third.inspect("show:1")
            .queue()
            .equals(List.of(new QueuedInstance(second.instanceId(), LockMode.EXCLUSIVE),
                    new QueuedInstance(third.instanceId(), LockMode.EXCLUSIVE))));
        KeyState queued = first.inspect("show:1");
        assertThat(queued.holders()).containsExactly(first.instanceId());
        String ownerToken = ownerToken("show:1");
        assertThat(ownerToken).startsWith(first.instanceId() + ":");
        assertThat(queued.toString()).doesNotContain(ownerToken);

        held.close();
        LockHandle secondsLock = secondGets.get(10, TimeUnit.SECONDS);
        KeyState next = first.inspect("show:1");
        assertThat(next.holders()).containsExactly(second.instanceId());
        assertThat(next.queue()).containsExactly(new QueuedInstance(third.instanceId(), LockMode.EXCLUSIVE));
        secondsLock.close();
        thirdGets.get(10, TimeUnit.SECONDS).close();
        KeyState free = first.inspect("show:1");
        assertThat(free.holders()).isEmpty();
        assertThat(free.queue()).isEmpty();
    }

    @Test
    void everyInstanceWithAReaderIsAHolder() {
        DefaultLockEngine first = fixture.engine();
        DefaultLockEngine second = fixture.engine();
        try (LockHandle one = first.tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow();
                LockHandle again = first.tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow();
                LockHandle two = second.tryLock("catalog", LockMode.READ, Duration.ZERO, null).orElseThrow()) {
            KeyState state = second.inspect("catalog");
            assertThat(state.holders()).containsExactlyInAnyOrder(first.instanceId(), second.instanceId());
        }
    }

    private static CompletableFuture<LockHandle> waitFor(DefaultLockEngine engine, String key) {
        return CompletableFuture.supplyAsync(() -> engine.tryLock(key, Duration.ofSeconds(20), null))
            .thenApply(Optional::orElseThrow);
    }

    private String ownerToken(String key) {
        try (RedisConnection connection = fixture.connectionFactory().getConnection()) {
            byte[] owner = connection.stringCommands()
                .get(LockKeys.of("lock:", key).lock().getBytes(StandardCharsets.UTF_8));
            return new String(owner, StandardCharsets.UTF_8);
        }
    }
}
