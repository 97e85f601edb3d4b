package dev.leasehold.benchmarks.contenders;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockContext;
import dev.leasehold.LockMode;

/**
 * A Spring bean whose methods are locked by {@code @DistributedLock}, the way an application uses
 * Leasehold. The logical key is {@code bench:<key>}. Not final: the aspect proxies it.
 */
public class LockedWork {

    /** True when the call ran inside a lock taken by the annotation layer. */
    @DistributedLock(name = "bench", key = "#key", waitTime = "0")
    public boolean annotationLayerPresent(String key) {
        return LockContext.current().isPresent();
    }

    @DistributedLock(name = "bench", key = "#key", waitTime = "30s")
    public void exclusive(String key, Runnable criticalSection) {
        run(criticalSection);
    }

    @DistributedLock(name = "bench", key = "#key", waitTime = "30s", mode = LockMode.READ)
    public void read(String key, Runnable criticalSection) {
        run(criticalSection);
    }

    @DistributedLock(name = "bench", key = "#key", waitTime = "30s", mode = LockMode.WRITE)
    public void write(String key, Runnable criticalSection) {
        run(criticalSection);
    }

    private static void run(Runnable criticalSection) {
        if (LockContext.current().isEmpty()) {
            // never run a critical section unlocked: that would show up as a false exclusion violation
            throw new IllegalStateException("@DistributedLock did not lock: the annotation layer is not present");
        }
        criticalSection.run();
    }
}
