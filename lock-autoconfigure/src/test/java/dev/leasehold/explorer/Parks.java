package dev.leasehold.explorer;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine's timed parks on the virtual clock ({@code EngineClock.parkNanos}: a release that lingers for a thread
 * of its turn to come back; {@code EngineClock.get}: a bounded wait of extend or close): a parked thread waits until the engine unparks it or the explorer moves the clock past
 * its time, never on a real timer. On the system's clock such a thread woke in real time to look at the virtual
 * clock, after the explorer had judged every thread quiet (up to a 100 ms linger later, a few steps on), so runs with
 * a linger did not replay across JVMs. Here a thread woken (by the engine or by the clock) counts as running until
 * it has left its park ({@link #woken}), and an unpark before the park is kept for it, as {@link LockSupport}'s permit.
 */
final class Parks {

    private static final class Parked {

        final long until;

        volatile boolean woken;

        Parked(long until) {
            this.until = until;
        }
    }

    private final SimWorld world;

    private final Map<Thread, Parked> parked = new HashMap<>();

    private final Set<Thread> permits = new HashSet<>();

    Parks(SimWorld world) {
        this.world = world;
    }

    void parkNanos(Object blocker, long nanos) {
        Thread me = Thread.currentThread();
        Parked park;
        synchronized (this) {
            if (permits.remove(me) || nanos <= 0 || me.isInterrupted()) {
                return;
            }
            park = new Parked(world.now() + nanos);
            parked.put(me, park);
        }
        try {
            while (!park.woken && !me.isInterrupted()) {
                LockSupport.park(blocker);
            }
        }
        finally {
            synchronized (this) {
                parked.remove(me);
            }
        }
    }

    void unpark(Thread thread) {
        synchronized (this) {
            Parked park = parked.get(thread);
            if (park == null) {
                permits.add(thread); // not parked yet: its next park returns at once
                return;
            }
            park.woken = true;
        }
        LockSupport.unpark(thread);
    }

    /** The clock moved to {@code now}: wakes the threads whose time is up; whether there were any. */
    boolean timeUp(long now) {
        Set<Thread> due = new HashSet<>();
        synchronized (this) {
            parked.forEach((thread, park) -> {
                if (!park.woken && now - park.until >= 0) {
                    park.woken = true;
                    due.add(thread);
                }
            });
        }
        due.forEach(LockSupport::unpark);
        return !due.isEmpty();
    }

    /**
     * A bounded wait of a blocking call (extend, an engine's close) on the virtual clock: parked until the future
     * completes (its completer wakes it) or the clock passes the limit.
     */
    <T> T get(CompletableFuture<T> future, long nanos) throws InterruptedException, ExecutionException, TimeoutException {
        if (future.isDone()) {
            return future.get();
        }
        long deadline = world.now() + nanos;
        Thread me = Thread.currentThread();
        future.whenComplete((value, error) -> unpark(me));
        while (!future.isDone()) {
            if (world.now() - deadline >= 0) {
                throw new TimeoutException();
            }
            parkNanos(future, deadline - world.now());
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
        return future.get();
    }

    /** Woken in its park and not out of it yet: it runs as soon as it is scheduled (it still says WAITING). */
    synchronized boolean woken(Thread thread) {
        Parked park = parked.get(thread);
        return park != null && park.woken;
    }
}
