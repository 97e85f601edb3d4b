package dev.leasehold.aspect;

import java.util.function.Supplier;

/**
 * The {@code @DistributedLock} name under which the current thread asks for a lock, while it asks: an
 * observer that sees only the key (the lock engine's) reads it here to name the lock (the observations'
 * {@code leasehold.lock.name}), even when the name itself contains a {@code :}.
 */
public final class DistributedLockNames {

    private static final ThreadLocal<String> CURRENT = new ThreadLocal<>();

    private DistributedLockNames() {
    }

    /** The name of the annotated call asking for a lock on this thread now, or null outside one. */
    public static String current() {
        return CURRENT.get();
    }

    /** Runs {@code call} (which asks for a lock) with {@code name} as the current name. */
    static <T> T during(String name, Supplier<T> call) {
        String outer = CURRENT.get();
        CURRENT.set(name);
        try {
            return call.get();
        }
        finally {
            if (outer == null) {
                CURRENT.remove();
            }
            else {
                CURRENT.set(outer);
            }
        }
    }
}
