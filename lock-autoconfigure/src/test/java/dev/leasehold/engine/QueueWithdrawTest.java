package dev.leasehold.engine;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fair queue's entry is the instance's, shared by every waiter of the JVM: a waiter that gives up while its
 * try is on its way withdraws after that try's reply, and the next local waiter, which took over the turn, must try
 * after that withdrawal, or the withdrawal takes the entry its try had just kept: the instance is out of the queue
 * until that waiter's next refresh (a second), and another instance's waiter that comes meanwhile gets the key first.
 * (The entry is withdrawn and made again, so the instance rejoins at the back; a place kept across local waiters
 * would need the withdrawal to know whether a local waiter follows.)
 */
class QueueWithdrawTest extends RealRedisEngineTest {

    @Test
    void aWaiterThatGivesUpWithItsTryOnTheWayLeavesItsPlaceInTheQueueToTheNextLocalWaiter() throws Exception {
        String key = "withdraw-race";
        DefaultLockEngine holder = fixture.engine();
        LockHandle held = holder.lock(key, Duration.ZERO);
        AcquireRepliesGate gate = fixture.track(new AcquireRepliesGate(fixture.server("lock:")));
        // a Redis timeout longer than the test holds a reply: the first waiter's try stays on its way until cancelled
        DefaultLockEngine engine = fixture.engine(gate, EngineFixture.fastSettings().withRedisTimeout(Duration.ofSeconds(5)));

        CompletableFuture<Optional<LockHandle>> first = engine.tryLockAsync(key, Duration.ofSeconds(20), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "the first waiter queued and listens for its turn",
                () -> queued(key).contains(engine.instanceId() + "|W") && engine.subscribedChannelCount() == 1);
        gate.hold(true);
        Await.until(Duration.ofSeconds(5), "the first waiter's next try (its refresh) reached Redis, its reply held back",
                () -> gate.held() == 1);
        CompletableFuture<Optional<LockHandle>> second = engine.tryLockAsync(key, Duration.ofSeconds(20), null)
            .toCompletableFuture();
        first.cancel(false);
        // without the fix the second waiter tries at once (its try passes the first's withdrawal); with it, it waits
        // for the withdrawal, which waits for the held reply: give the first case the time to happen
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
        while (gate.held() < 2 && System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
        gate.hold(false);

        Await.until(Duration.ofSeconds(5), "the first waiter's withdrawal ran", () -> gate.withdrawals() == 1);
        // the cause, on the connection: the second waiter's try is sent after the withdrawal, not before it
        assertThat(gate.calls()).as("calls on the connection since the first waiter's held try").startsWith("acquire", "withdraw");
        // the second waiter's try follows the withdrawal and queues the instance again at once; without the fix it
        // went before it, so the instance stays out of the queue until the second waiter's next refresh (1 s)
        Await.until(Duration.ofMillis(FairQueue.DEFAULTS.refreshMillis() * 8 / 10), "the instance queues again for the second waiter",
                () -> queued(key).contains(engine.instanceId() + "|W"));
        DefaultLockEngine later = fixture.engine();
        CompletableFuture<Optional<LockHandle>> third = later.tryLockAsync(key, Duration.ofSeconds(20), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "another instance's waiter queued",
                () -> queued(key).contains(later.instanceId() + "|W"));
        assertThat(queued(key)).as("the queue once the other instance came").first()
            .isEqualTo(engine.instanceId() + "|W");

        held.close();
        Optional<LockHandle> secondGot = second.get(10, TimeUnit.SECONDS);
        assertThat(secondGot).as("the second waiter, queued before the other instance's").isPresent();
        assertThat(third).as("the other instance's waiter, which came later").isNotDone();
        secondGot.get().close();
        assertThat(third.get(10, TimeUnit.SECONDS)).isPresent().get().satisfies(LockHandle::close);
    }

    private List<String> queued(String key) {
        String members = redis.server().command("ZRANGE", LockKeys.of("lock:", key).queue(), "0", "-1"); // "[a, b]"
        String inside = members.substring(1, members.length() - 1);
        return inside.isBlank() ? List.of() : List.of(inside.split(", "));
    }

    /** Every acquire reaches Redis at once; its reply is held while the test says so. Counts withdrawals run. */
    static final class AcquireRepliesGate extends ForwardingLockServer {

        private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

        private final AtomicInteger held = new AtomicInteger();

        private final AtomicInteger withdrawals = new AtomicInteger();

        /** Acquires and withdrawals in the order they were sent, from the first held acquire on. */
        private final List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();

        AcquireRepliesGate(LockServer real) {
            super(real);
        }

        void hold(boolean hold) {
            if (hold) {
                gate = new CompletableFuture<>();
            }
            else {
                gate.complete(null);
            }
        }

        int held() {
            return held.get();
        }

        int withdrawals() {
            return withdrawals.get();
        }

        List<String> calls() {
            return calls;
        }

        @Override
        public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
                long writerWaitingMillis, String waiterId, QueueTry queueTry) {
            CompletableFuture<Void> now = gate;
            if (!now.isDone() || !calls.isEmpty()) {
                calls.add("acquire");
            }
            CompletableFuture<Grant> reply = real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId,
                    queueTry);
            if (now.isDone()) {
                return reply;
            }
            held.incrementAndGet();
            return reply.thenCombine(now, (grant, ignored) -> grant);
        }

        @Override
        public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
            calls.add("withdraw");
            return real.withdraw(keys, waiterId).whenComplete((took, error) -> withdrawals.incrementAndGet());
        }
    }
}
