package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

import dev.leasehold.LockLostException;
import dev.leasehold.integration.LeaseholdLockRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The cases of Spring Integration's own {@code RedisLockRegistryTests} (7.x) with several instances (each
 * registry on its own engine and Redis client, as separate JVMs would be) or a lease that runs out, written
 * again for {@link LeaseholdLockRegistry} on a real Redis. Where a case lets a short TTL run out, here the
 * instance's renewals are cut off (as if it froze or lost its network) until its lease ran out and Redis
 * dropped the key. Their names follow Spring Integration's; the rest are in {@link RegistryCasesTest}.
 */
class RegistryInstancesCasesTest extends RealRedisEngineTest {

    /** Renewed every 200 ms: an instance cut off from Redis loses its lease within a second. */
    private static final LockEngineSettings SHORT_LEASE = EngineFixture.fastSettings()
        .withLeaseTime(Duration.ofMillis(600));

    private final ExecutorService threads = Executors.newFixedThreadPool(20);

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    /** A registry on its own instance, whose renewals the test can cut off. */
    private record Instance(LeaseholdLockRegistry registry, FaultyLockServer server, DefaultLockEngine engine) {

        Lock obtain(String key) {
            return registry.obtain(key);
        }
    }

    private Instance instance() {
        FaultyLockServer server = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine engine = fixture.engine(server, SHORT_LEASE);
        return new Instance(new LeaseholdLockRegistry(engine), server, engine);
    }

    /** Cuts the instance's renewals and waits until its lease ran out and Redis dropped the key. */
    private void expire(Instance instance, String key) {
        instance.server().failRenewals(true);
        Await.until(Duration.ofSeconds(10), "'" + key + "' expires", () -> !lockKeyExists(key));
    }

    @Test
    void testUnlockAfterLockStatusHasBeenExpired() {
        Instance one = instance();
        Lock lock = one.obtain("foo");
        lock.lock();
        expire(one, "foo");
        assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
        assertThat(one.engine().heldLockCount()).isZero();
    }

    @Test
    void testExceptionOnExpire() {
        Instance one = instance();
        Lock lock = one.obtain("foo");
        assertThat(lock.tryLock()).isTrue();
        expire(one, "foo");
        assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock)
            .withMessageContaining("'foo' was lost")
            .withCauseInstanceOf(LockLostException.class);
    }

    @Test
    void testUnlockDoesNotDeleteOtherClientsLock() {
        Instance one = instance();
        Instance two = instance();
        Lock first = one.obtain("testLock");
        first.lock();
        expire(one, "testLock");
        Lock second = two.obtain("testLock");
        assertThat(second.tryLock()).isTrue();
        String secondToken = redis.server().command("GET", "lock:{testLock}");
        assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(first::unlock);
        assertThat(redis.server().command("GET", "lock:{testLock}")).isEqualTo(secondToken);
        second.unlock();
        assertThat(lockKeyExists("testLock")).isFalse();
    }

    @Test
    void testExpireTwoRegistries() {
        Instance one = instance();
        Instance two = instance();
        Lock first = one.obtain("foo");
        Lock second = two.obtain("foo");
        assertThat(first.tryLock()).isTrue();
        assertThat(second.tryLock()).isFalse();
        expire(one, "foo");
        assertThat(second.tryLock()).isTrue();
        assertThat(first.tryLock()).isFalse(); // the Lock contract: not available, so false (not an exception)
        second.unlock();
    }

    @Test
    void testRenewalOnExpire() throws Exception {
        Lock lock = instance().obtain("foo");
        assertThat(lock.tryLock()).isTrue();
        Thread.sleep(2 * SHORT_LEASE.leaseTime().toMillis()); // work for two leases: the watchdog renews
        lock.unlock();
        assertThat(fixture.lost).isEmpty();
    }

    @Test
    void testTwoThreadsDifferentRegistries() throws Exception {
        Lock first = instance().obtain("foo");
        Lock second = instance().obtain("foo");
        first.lockInterruptibly();
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicBoolean locked = new AtomicBoolean();
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
            waiting.countDown();
            try {
                second.lockInterruptibly();
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            locked.set(true);
            second.unlock();
        }, threads);
        assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locked).isFalse();
        first.unlock();
        other.get(10, TimeUnit.SECONDS);
        assertThat(locked).isTrue();
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testEquals() {
        LeaseholdLockRegistry one = new LeaseholdLockRegistry(fixture.engine());
        LeaseholdLockRegistry two = new LeaseholdLockRegistry(fixture.engine());
        LeaseholdLockRegistry elsewhere = new LeaseholdLockRegistry(fixture.engine(EngineFixture.fastSettings()
            .withKeyPrefix("other:")));

        Lock first = one.obtain("foo");
        Lock second = one.obtain("foo");
        assertThat(second).isEqualTo(first);
        first.lock();
        second.lock();
        first.unlock();
        second.unlock();
        assertThat(second).isEqualTo(first);

        first = one.obtain("foo");
        second = two.obtain("foo");
        assertThat(second).isNotEqualTo(first);
        first.lock();
        assertThat(second.tryLock()).isFalse();
        first.unlock();

        // another key prefix (Spring Integration's registry key) is another lock
        second = elsewhere.obtain("foo");
        assertThat(second).isNotEqualTo(first);
        first.lock();
        second.lock();
        first.unlock();
        second.unlock();
    }

    @Test
    void twoRedisLockRegistryTest() {
        Lock first = instance().obtain("test-1");
        Lock second = instance().obtain("test-1");
        CountDownLatch firstLocked = new CountDownLatch(1);
        CompletableFuture<Void> one = CompletableFuture.runAsync(() -> {
            first.lock();
            firstLocked.countDown();
            first.unlock();
        }, threads);
        CompletableFuture<Void> two = CompletableFuture.runAsync(() -> {
            try {
                firstLocked.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            second.lock();
            second.unlock();
        }, threads);
        assertThat(one).succeedsWithin(Duration.ofSeconds(10));
        assertThat(two).succeedsWithin(Duration.ofSeconds(10));
    }

    @Test
    void multiRedisLockRegistryTest() throws Exception {
        AtomicInteger done = new AtomicInteger();
        List<Callable<Boolean>> turns = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
            turns.add(() -> {
                Lock lock = registry.obtain("testKey");
                lock.lock();
                lock.unlock();
                done.incrementAndGet();
                return true;
            });
        }
        for (int round = 0; round < 3; round++) {
            for (Future<Boolean> turn : threads.invokeAll(turns, 30, TimeUnit.SECONDS)) {
                assertThat(turn.get()).isTrue();
            }
        }
        assertThat(done).hasValue(30);
    }

    @Test
    void earlyWakeUpTest() throws Exception {
        Lock first = instance().obtain("testKey");
        Instance two = instance();
        Instance three = instance();
        first.lock();
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> tryFor(two.obtain("testKey")), threads);
        CompletableFuture<Boolean> third = CompletableFuture.supplyAsync(() -> tryFor(three.obtain("testKey")), threads);
        Await.until(Duration.ofSeconds(10), "both wait",
                () -> two.engine().waitingCount() == 1 && three.engine().waitingCount() == 1);
        first.unlock();
        // the release wakes one of them, and only one gets it: the other keeps waiting (its winner never unlocks)
        Await.until(Duration.ofSeconds(5), "one wins", () -> second.isDone() || third.isDone());
        CompletableFuture<Boolean> loser = second.isDone() ? third : second;
        assertThat(second.isDone() ? second.get() : third.get()).isTrue();
        assertThatExceptionOfType(TimeoutException.class).isThrownBy(() -> loser.get(1, TimeUnit.SECONDS));
    }

    private static boolean tryFor(Lock lock) {
        try {
            return lock.tryLock(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
