package dev.leasehold.engine.holding;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import dev.leasehold.engine.key.HeldLock;

import org.jspecify.annotations.Nullable;

/**
 * Which lock each thread holds bound to it on each key: at most one per thread and key, found by the key.
 * <p>
 * Keyed by the key alone, not by a (thread, key) pair: a pair object per held lock, and three more made and
 * dropped per lock and unlock to look it up, cost 24 bytes each. Almost always a single thread holds a key bound
 * to it, whose lock is then the map's value as it is; when several do (readers, or one thread's lock on its way
 * out while another's comes in) the value is an array of their locks, replaced whole on every change. Each lock
 * knows its thread ({@link HeldLock#owner}).
 */
final class ThreadBindings {

    private final ConcurrentHashMap<String, Object> byKey = new ConcurrentHashMap<>();

    /** The lock {@code thread} holds bound to it on {@code key}, or null. */
    @Nullable HeldLock get(Thread thread, String key) {
        Object value = byKey.get(key);
        if (value instanceof HeldLock lock) {
            return lock.owner == thread ? lock : null;
        }
        if (value != null) {
            for (HeldLock lock : (HeldLock[]) value) {
                if (lock.owner == thread) {
                    return lock;
                }
            }
        }
        return null;
    }

    /** Binds {@code lock} to its owner thread on its key, in place of that thread's lock there, if any. */
    void bind(HeldLock lock) {
        String key = lock.key();
        if (byKey.putIfAbsent(key, lock) == null) {
            return; // the usual case: nobody else holds the key bound
        }
        byKey.compute(key, (k, value) -> {
            if (value == null) {
                return lock; // the other binding went between the two calls (readers of one key come and go)
            }
            HeldLock[] others = without(value, other -> other.owner == lock.owner);
            if (others.length == 0) {
                return lock;
            }
            HeldLock[] all = Arrays.copyOf(others, others.length + 1);
            all[others.length] = lock;
            return all;
        });
    }

    /** Unbinds {@code lock}, when it is bound. */
    void unbind(HeldLock lock) {
        String key = lock.key();
        if (byKey.remove(key, lock)) {
            return;
        }
        byKey.computeIfPresent(key, (k, value) -> {
            if (!(value instanceof HeldLock[])) {
                return value; // another lock, or this one was not bound
            }
            HeldLock[] rest = without(value, other -> other == lock);
            return rest.length == 0 ? null : rest.length == 1 ? rest[0] : rest;
        });
    }

    /** Whether {@code thread} holds any key bound to it whose lock passes {@code test}. */
    boolean anyOf(Thread thread, Predicate<HeldLock> test) {
        for (Object value : byKey.values()) {
            HeldLock[] locks = value instanceof HeldLock lock ? new HeldLock[] { lock } : (HeldLock[]) value;
            for (HeldLock lock : locks) {
                if (lock.owner == thread && test.test(lock)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static HeldLock[] without(Object value, Predicate<HeldLock> dropped) {
        HeldLock[] locks = value instanceof HeldLock lock ? new HeldLock[] { lock } : (HeldLock[]) value;
        return Arrays.stream(locks).filter(dropped.negate()).toArray(HeldLock[]::new);
    }
}
