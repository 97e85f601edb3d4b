package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockServer;
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

    /**
     * A renewal the watchdog chose before a holdAtLeast release but that reached Redis after it (on Jedis a stripe
     * queue can order it so by itself) used to find the holder's token still in the key and put the whole lease
     * back: the key stayed taken for the lease, not for the rest of the hold. The release now leaves the key in a
     * value no token owns, and the renewal's refusal is no loss (the owner released it).
     */
    @Test
    void aRenewalThatArrivesAfterAHoldAtLeastReleaseDoesNotPutTheLeaseBack() throws Exception {
        Duration lease = Duration.ofSeconds(9); // renewed every 3 s
        Duration hold = Duration.ofMillis(4500);
        LockEngineSettings settings = new LockEngineSettings("lock:", lease, Duration.ofMillis(500), Duration.ofMillis(200));
        HeldBackRenewals server = new HeldBackRenewals(fixture.server("lock:"));
        DefaultLockEngine engine = fixture.engine(server, settings);
        DefaultLockEngine other = fixture.engine();
        other.isLocked("warm-up");
        LockHandle handle = engine.tryLock("report", Duration.ZERO, null, hold).orElseThrow();
        Await.until(Duration.ofSeconds(10), "the watchdog chose the lock for a renewal", () -> !server.heldBack.isEmpty());

        handle.close(); // the hold has about 1.5 s left: the key stays taken that long
        long keptMillis = Long.parseLong(redis.server().command("PTTL", "lock:{report}").trim());
        assertThat(keptMillis).isBetween(1L, hold.toMillis());
        // still shown as taken by its instance, with the tokens it was granted
        var state = other.inspect("report");
        assertThat(state.held()).isTrue();
        assertThat(state.holders()).containsExactly(engine.instanceId());
        assertThat(state.fencingCounter()).isGreaterThanOrEqualTo(handle.fencingToken());
        List<CompletableFuture<Boolean>> late = server.sendHeldBack();
        assertThat(late.get(0).get(5, TimeUnit.SECONDS)).as("the late renewal extended the released lock").isFalse();

        long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{report}").trim());
        assertThat(ttl).as("the key's TTL after the late renewal").isLessThanOrEqualTo(keptMillis);
        assertThat(handle.isHeld()).isFalse();
        // another instance gets the key at the hold's end, not a lease later
        long waitStarted = System.nanoTime();
        other.tryLock("report", Duration.ofSeconds(8), Duration.ofSeconds(5)).orElseThrow().close();
        assertThat((System.nanoTime() - waitStarted) / 1_000_000).isLessThan(ttl + 3_000);
        // its holder released it: the refusal, settled long since, told nobody of a loss
        assertThat(fixture.lost).isEmpty();
    }

    /** Holds back the first round of renewals until the test sends it: it reaches Redis after a release. */
    private static final class HeldBackRenewals extends ForwardingLockServer {

        final List<LockServer.Renewal> heldBack = new java.util.concurrent.CopyOnWriteArrayList<>();

        private final List<CompletableFuture<Boolean>> answers = new ArrayList<>();

        private volatile boolean sent;

        HeldBackRenewals(LockServer real) {
            super(real);
        }

        @Override
        public synchronized List<CompletableFuture<Boolean>> renewAll(List<LockServer.Renewal> renewals) {
            if (sent || !heldBack.isEmpty()) {
                return real.renewAll(renewals);
            }
            List<CompletableFuture<Boolean>> pending = new ArrayList<>();
            for (int i = 0; i < renewals.size(); i++) {
                pending.add(new CompletableFuture<>());
            }
            answers.addAll(pending);
            heldBack.addAll(renewals);
            return pending;
        }

        synchronized List<CompletableFuture<Boolean>> sendHeldBack() {
            sent = true;
            List<CompletableFuture<Boolean>> replies = real.renewAll(heldBack);
            for (int i = 0; i < replies.size(); i++) {
                CompletableFuture<Boolean> answer = answers.get(i);
                replies.get(i).whenComplete((renewed, error) -> {
                    if (error != null) {
                        answer.completeExceptionally(error);
                    }
                    else {
                        answer.complete(renewed);
                    }
                });
            }
            return replies;
        }
    }
}
