package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MutualExclusionTest extends EveryServerEngineTest {

    @Test
    void twoClientsWithManyThreadsNeverOverlapAndFencingTokensOnlyGrow() throws Exception {
        LockService first = fixture.engine();
        LockService second = fixture.engine();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokensInOrder = new CopyOnWriteArrayList<>();
        int threadsPerClient = 6;
        int rounds = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threadsPerClient * 2);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threadsPerClient * 2; t++) {
            LockService client = t % 2 == 0 ? first : second;
            work.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (LockHandle handle = client.lock("shared", Duration.ofSeconds(20))) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        tokensInOrder.add(handle.fencingToken());
                        inside.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> future : work) {
            future.get(50, TimeUnit.SECONDS);
        }
        pool.shutdown();

        assertThat(overlaps).hasValue(0);
        assertThat(tokensInOrder).hasSize(threadsPerClient * 2 * rounds);
        for (int i = 1; i < tokensInOrder.size(); i++) {
            assertThat(tokensInOrder.get(i)).as("token %d after %d", i, i - 1).isGreaterThan(tokensInOrder.get(i - 1));
        }
        assertThat(first.isLocked("shared")).isFalse();
    }

    @Test
    void aHeldKeyIsRefusedToOtherClientsAndFreedByClose() {
        LockService first = fixture.engine();
        LockService second = fixture.engine();
        LockHandle handle = first.lock("order:42", Duration.ZERO);
        assertThat(handle.key()).isEqualTo("order:42");
        assertThat(handle.fencingToken()).isPositive();
        assertThat(handle.isHeld()).isTrue();
        assertThat(second.isLocked("order:42")).isTrue();
        assertThat(second.tryLock("order:42", Duration.ZERO, null)).isEmpty();
        assertThat(redis.server().command("EXISTS", "lock:{order:42}")).isEqualTo("1");

        handle.close();

        assertThat(handle.isHeld()).isFalse();
        assertThat(second.isLocked("order:42")).isFalse();
        Optional<LockHandle> taken = second.tryLock("order:42", Duration.ZERO, null);
        assertThat(taken).isPresent();
        assertThat(taken.get().fencingToken()).isGreaterThan(handle.fencingToken());
        taken.get().close();
    }

    @Test
    void withLockRunsTheActionUnderTheLockAndAlwaysReleases() {
        LockService service = fixture.engine();
        LockService other = fixture.engine();
        String result = service.withLock("job", Duration.ofSeconds(1), () -> {
            assertThat(other.isLocked("job")).isTrue();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(other.isLocked("job")).isFalse();

        try {
            service.withLock("job", Duration.ofSeconds(1), () -> {
                throw new IllegalStateException("boom");
            });
        }
        catch (IllegalStateException expected) {
            assertThat(expected).hasMessage("boom");
        }
        assertThat(other.isLocked("job")).isFalse();
    }

    @Test
    void tokensAreUniquePerAcquisitionNotPerProcess() {
        DefaultLockEngine engine = fixture.engine();
        LockHandle first = engine.lock("a", Duration.ZERO);
        String firstToken = ownerToken(redis.server().command("GET", "lock:{a}"), first);
        first.close();
        LockHandle second = engine.lock("a", Duration.ZERO);
        String secondToken = ownerToken(redis.server().command("GET", "lock:{a}"), second);
        second.close();
        assertThat(firstToken).startsWith(engine.instanceId() + ":");
        assertThat(secondToken).startsWith(engine.instanceId() + ":").isNotEqualTo(firstToken);
        // 128 random bits, base64url without padding
        assertThat(firstToken.substring(engine.instanceId().length() + 1)).hasSize(22);
    }

    /** The lock's value is '<owner token>@<last fencing token of its block>' ('#' for a quiet grant, owner.lua). */
    private static String ownerToken(String value, LockHandle handle) {
        int at = Math.max(value.lastIndexOf('@'), value.lastIndexOf('#'));
        assertThat(Long.parseLong(value.substring(at + 1))).isGreaterThanOrEqualTo(handle.fencingToken());
        return value.substring(0, at);
    }
}
