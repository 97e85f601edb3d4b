package dev.leasehold.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReentrancyTest extends RealRedisEngineTest {

    @Test
    void theSameThreadReentersAtOnceWithTheSameTokenAndTheOutermostCloseReleases() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        DefaultLockEngine other = fixture.engine();
        LockHandle outer = engine.lock("account:7", Duration.ZERO);
        LockHandle inner = engine.lock("account:7", Duration.ZERO);
        Optional<LockHandle> innermost = engine.tryLock("account:7", Duration.ZERO, Duration.ofSeconds(5));

        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(innermost).get().extracting(LockHandle::fencingToken).isEqualTo(outer.fencingToken());

        innermost.get().close();
        inner.close();
        inner.close(); // idempotent: must not give back a second hold
        assertThat(other.isLocked("account:7")).isTrue();
        assertThat(outer.isHeld()).isTrue();
        assertThat(inner.isHeld()).isFalse();

        // another thread of the same JVM is not re-entrant: it must wait
        CompletableFuture<Boolean> otherThread = CompletableFuture.supplyAsync(() -> engine
            .tryLock("account:7", Duration.ZERO, null).map(handle -> {
                handle.close();
                return true;
            }).orElse(false));
        assertThat(otherThread.get(5, TimeUnit.SECONDS)).isFalse();

        outer.close();
        assertThat(other.isLocked("account:7")).isFalse();
    }

    @Test
    void aWriterMayReadButAReaderMayNotUpgrade() {
        DefaultLockEngine engine = fixture.engine();
        try (LockHandle write = engine.tryLock("doc", LockMode.WRITE, Duration.ZERO, null).orElseThrow();
                LockHandle read = engine.tryLock("doc", LockMode.READ, Duration.ZERO, null).orElseThrow()) {
            assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
        }
        try (LockHandle read = engine.tryLock("doc", LockMode.READ, Duration.ZERO, null).orElseThrow()) {
            assertThatThrownBy(() -> engine.tryLock("doc", LockMode.WRITE, Duration.ZERO, null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("READ lock on 'doc'");
        }
        assertThat(engine.isLocked("doc")).isFalse();
    }

    @Test
    void aDetachedLockIsNoLongerReenteredByItsThread() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle asyncWork = engine.lock("async", Duration.ZERO);
        engine.detachFromThread(asyncWork);
        assertThat(engine.tryLock("async", Duration.ZERO, null)).isEmpty();
        CompletableFuture.runAsync(asyncWork::close).get(5, TimeUnit.SECONDS);
        try (LockHandle again = engine.lock("async", Duration.ZERO)) {
            assertThat(again.fencingToken()).isGreaterThan(asyncWork.fencingToken());
        }
    }
}
