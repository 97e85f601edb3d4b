package dev.leasehold.integration;

import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import dev.leasehold.LockLostException;
import dev.leasehold.LockService;

import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} backed by Leasehold, for leader election
 * ({@code LockRegistryLeaderInitiator}), aggregators and anything else that takes a registry: each key
 * is {@link LockService#asLock(String)} of {@code String.valueOf(key)}, so it is the same lock as
 * {@code @DistributedLock(name = key)} and {@code lockService.lock(key, ...)}. Locks have a watchdog lease
 * ({@code leasehold.lease-time}) and are re-entrant per thread.
 * <p>
 * {@link #obtain} returns the same {@link Lock} for the same key as long as it stays in a cache of the
 * most recently used {@value #DEFAULT_CAPACITY} keys (as {@code RedisLockRegistry} does); unlock through
 * the {@code Lock} you locked.
 * <p>
 * As with {@code RedisLockRegistry} and {@code JdbcLockRegistry}, {@code unlock()} of a lock that was lost
 * (its lease ran out, or Redis lost the key) throws {@link ConcurrentModificationException} (its cause is the
 * view's {@link LockLostException}); the hold is given up all the same, and no other owner's key is touched.
 */
public class LeaseholdLockRegistry implements LockRegistry<Lock> {

    public static final int DEFAULT_CAPACITY = 100_000;

    private final LockService lockService;

    private final Map<String, Lock> locks;

    public LeaseholdLockRegistry(LockService lockService) {
        this(lockService, DEFAULT_CAPACITY);
    }

    public LeaseholdLockRegistry(LockService lockService, int capacity) {
        this.lockService = Objects.requireNonNull(lockService, "lockService");
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.locks = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Lock> eldest) {
                return size() > capacity;
            }
        };
    }

    @Override
    public Lock obtain(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        String key = String.valueOf(lockKey);
        synchronized (locks) {
            return locks.computeIfAbsent(key, ignored -> new RegistryLock(lockService.asLock(key)));
        }
    }

    @Override
    public String toString() {
        return "LeaseholdLockRegistry[" + lockService + "]";
    }

    /** The {@link LockService#asLock} view, with the exception registry users catch for a lost lock. */
    private record RegistryLock(Lock view) implements Lock {

        @Override
        public void lock() {
            view.lock();
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            view.lockInterruptibly();
        }

        @Override
        public boolean tryLock() {
            return view.tryLock();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return view.tryLock(time, unit);
        }

        @Override
        public void unlock() {
            try {
                view.unlock();
            }
            catch (LockLostException ex) {
                throw new ConcurrentModificationException(ex.getMessage(), ex);
            }
        }

        @Override
        public Condition newCondition() {
            return view.newCondition();
        }

        @Override
        public String toString() {
            return view.toString();
        }
    }
}
