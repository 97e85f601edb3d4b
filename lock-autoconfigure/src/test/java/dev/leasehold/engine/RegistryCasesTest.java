package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;

import dev.leasehold.integration.LeaseholdLockRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The cases of Spring Integration's own {@code RedisLockRegistryTests} (7.x) that need one instance, written
 * again for {@link LeaseholdLockRegistry} on a real Redis; the cases with several instances or a lost lease
 * are in {@link RegistryInstancesCasesTest}. Their names follow Spring Integration's.
 * <p>
 * Left out, being about {@code RedisLockRegistry} itself rather than what a registry user sees: its lock
 * types (spin or pub/sub: Leasehold has one way to wait); {@code DistributedLock}'s per-lock TTL
 * ({@code testLockWithCustomTtl}, {@code testTryLockWithCustomTtl}: the view has a watchdog lease);
 * {@code RenewableLockRegistry.renewLock} ({@code testLockRenew*}: the watchdog renews); its executor and the
 * Redis 8.4 CAS/CAD fallback ({@code testInitialiseWithCustomExecutor}, {@code test*FallbackWhenCasCadNotSupported},
 * which reach into its fields); and its cache policy ({@code concurrentObtain*}, {@code setCapacityTest},
 * {@code cannotAcquireLockExceptionOnCacheLimit}, {@code unusedLockIsStale},
 * {@code testTwoThreadsRemoveAndObtainSameLockSimultaneously}: {@code setCacheCapacity},
 * {@code expireUnusedOlderThan} and the refusal of an exhausted cache are its own API).
 */
class RegistryCasesTest extends RealRedisEngineTest {

    private final ExecutorService otherThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopOtherThread() {
        otherThread.shutdownNow();
    }

    @Test
    void testLock() {
        DefaultLockEngine engine = fixture.engine();
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(engine);
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lock();
            try {
                assertThat(lockKeyExists("foo")).isTrue();
                assertThat(registry.obtain("foo")).isSameAs(lock);
            }
            finally {
                lock.unlock();
            }
        }
        assertThat(lockKeyExists("foo")).isFalse();
        assertThat(engine.heldLockCount()).isZero();
    }

    @Test
    void testLockInterruptibly() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lockInterruptibly();
            try {
                assertThat(lockKeyExists("foo")).isTrue();
            }
            finally {
                lock.unlock();
            }
        }
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testReentrantLock() {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        for (int i = 0; i < 10; i++) {
            Lock outer = registry.obtain("foo");
            outer.lock();
            try {
                Lock inner = registry.obtain("foo");
                assertThat(inner).isSameAs(outer);
                inner.lock();
                inner.unlock();
                assertThat(lockKeyExists("foo")).isTrue();
            }
            finally {
                outer.unlock();
            }
        }
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testReentrantLockInterruptibly() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        for (int i = 0; i < 10; i++) {
            Lock outer = registry.obtain("foo");
            outer.lockInterruptibly();
            try {
                Lock inner = registry.obtain("foo");
                assertThat(inner).isSameAs(outer);
                inner.lockInterruptibly();
                inner.unlock();
            }
            finally {
                outer.unlock();
            }
        }
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testTwoLocks() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        for (int i = 0; i < 10; i++) {
            Lock foo = registry.obtain("foo");
            foo.lockInterruptibly();
            try {
                Lock bar = registry.obtain("bar");
                assertThat(bar).isNotSameAs(foo);
                bar.lockInterruptibly();
                assertThat(lockKeyExists("foo") && lockKeyExists("bar")).isTrue();
                bar.unlock();
            }
            finally {
                foo.unlock();
            }
        }
        assertThat(lockKeyExists("foo") || lockKeyExists("bar")).isFalse();
    }

    @Test
    void testTwoThreadsSecondFailsToGetLock() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Lock mine = registry.obtain("foo");
        mine.lockInterruptibly();
        CompletableFuture<Boolean> theirs = CompletableFuture.supplyAsync(() -> {
            Lock lock = registry.obtain("foo");
            try {
                return lock.tryLock(200, TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            finally {
                // RedisLockRegistry throws IllegalStateException here; the Lock contract's own
                // IllegalMonitorStateException is what this registry throws, as JdbcLockRegistry does
                assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
                    .withMessageContaining("does not hold");
            }
        }, otherThread);
        assertThat(theirs.get(10, TimeUnit.SECONDS)).isFalse();
        mine.unlock();
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testTwoThreads() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Lock mine = registry.obtain("foo");
        mine.lockInterruptibly();
        assertThat(lockKeyExists("foo")).isTrue();
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicBoolean locked = new AtomicBoolean();
        CompletableFuture<Void> theirs = CompletableFuture.runAsync(() -> {
            Lock lock = registry.obtain("foo");
            waiting.countDown();
            try {
                lock.lockInterruptibly();
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            locked.set(true);
            assertThat(lockKeyExists("foo")).isTrue();
            lock.unlock();
        }, otherThread);
        assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locked).isFalse();
        mine.unlock();
        theirs.get(10, TimeUnit.SECONDS);
        assertThat(locked).isTrue();
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testTwoThreadsWrongOneUnlocks() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Lock lock = registry.obtain("foo");
        lock.lockInterruptibly();
        CompletableFuture<Void> wrongThread = CompletableFuture.runAsync(lock::unlock, otherThread);
        assertThat(wrongThread).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
            .havingCause().isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lockKeyExists("foo")).isTrue();
        lock.unlock();
        assertThat(lockKeyExists("foo")).isFalse();
    }

    @Test
    void testThreadLocalListLeaks() {
        DefaultLockEngine engine = fixture.engine();
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(engine);
        for (int i = 0; i < 10; i++) {
            registry.obtain("foo" + i).lock();
        }
        assertThat(engine.heldLockCount()).isEqualTo(10);
        for (int i = 0; i < 10; i++) {
            registry.obtain("foo" + i).unlock();
        }
        // nothing left behind: no key in Redis, no lock, gate or watchdog entry in the engine
        for (int i = 0; i < 10; i++) {
            assertThat(lockKeyExists("foo" + i)).isFalse();
        }
        assertThat(engine.heldLockCount()).isZero();
        assertThat(engine.localGateCount()).isZero();
        assertThat(engine.watchedCount()).isZero();
    }

    @Test
    void testExpireNotChanged() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Lock lock = registry.obtain("foo");
        lock.lock();
        long ttl = Long.parseLong(redis.server().command("PTTL", "lock:{foo}"));
        CompletableFuture<Boolean> theirs = CompletableFuture.supplyAsync(() -> registry.obtain("foo").tryLock(),
                otherThread);
        assertThat(theirs.get(10, TimeUnit.SECONDS)).isFalse();
        // the failed try did not lengthen the holder's lease (the watchdog renews only every 10 s here)
        assertThat(Long.parseLong(redis.server().command("PTTL", "lock:{foo}"))).isLessThanOrEqualTo(ttl);
        lock.unlock();
    }

    @Test
    void notUsedLockIsEvictedOnCacheLimit() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine(), 2);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
            Lock lock = registry.obtain("lock1");
            lock.lock();
            try {
                holding.countDown();
                done.await(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                lock.unlock();
            }
        }, otherThread);
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        registry.obtain("lock2");
        registry.obtain("lock3"); // lock1's Lock falls out of the cache of 2
        Lock again = registry.obtain("lock1");
        assertThat(again.tryLock(1, TimeUnit.SECONDS)).isFalse(); // still held by the other thread
        done.countDown();
        holder.get(10, TimeUnit.SECONDS);
        again.lock();
        again.unlock();
        assertThat(lockKeyExists("lock1")).isFalse();
    }

    @Test
    void testUnlockWhenInterruptedBlocksUntilKeyRemoved() throws Exception {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Lock lock = registry.obtain("test");
        AtomicBoolean statusKept = new AtomicBoolean();
        CompletableFuture.runAsync(() -> {
            lock.lock();
            Thread.currentThread().interrupt();
            lock.unlock();
            statusKept.set(Thread.interrupted());
        }, otherThread).get(10, TimeUnit.SECONDS);
        assertThat(statusKept).isTrue();
        // the interrupted thread's unlock released: the lock is free at once, here and in Redis
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(lockKeyExists("test")).isFalse();
    }
}
