package dev.leasehold.engine.holding;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.HeldLockInfo;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The locks this JVM holds, from the grant to their end: their handles (re-entrant per thread), the watchdog that
 * renews their leases, lease extension, taking over a lock handed off by another local thread, and how each lock
 * ends ({@link LockEndings}). Waiting knows nothing of this but the grant it hands in and the take-over it asks for.
 */
public final class Holdings implements HandleActions {

    private static final Log logger = LogFactory.getLog("dev.leasehold.engine.DefaultLockEngine");

    private static final Cleaner CLEANER = Cleaner.create();

    private static final CompletableFuture<Void> RELEASED = CompletableFuture.completedFuture(null);

    private final LockEngineSettings settings;

    private final Reentrancy reentrancy;

    private final LockEndings endings;

    private final Watchdog watchdog;

    private final LeaseExtension leaseExtension;

    private final HandOffs handOffs;

    /**
     * Every lock held now, attached to a thread or not, with what closing its outermost handle does. The watchdog
     * renews those of them it watches (a flag on the lock: one map entry per held lock, not one here and one in a
     * set of the watchdog's).
     */
    private final Map<HeldLock, DefaultLockHandle.Release> active = new ConcurrentHashMap<>();

    public Holdings(LockServer server, LockEngineSettings settings, LockObserver observer, KeyLines lines,
            ScheduledExecutorService scheduler, CoarseTimeouts timeouts) {
        this.settings = settings;
        this.endings = new LockEndings(server, settings, observer, lines, this::view, timeouts);
        this.watchdog = new Watchdog(server, scheduler, settings.leaseTime(), settings.redisTimeout(), endings::lose,
                observer, lines, active.keySet());
        this.endings.watchedBy(watchdog);
        this.reentrancy = new Reentrancy(endings::lose);
        this.leaseExtension = new LeaseExtension(server, settings.redisTimeout(), watchdog, endings::lose);
        this.handOffs = new HandOffs(server, endings);
        watchdog.start();
    }

    /** The calling thread's lock on the key, with one more hold, or null when it holds none (acquire anew). */
    public @Nullable LockHandle reenter(String key, LockMode mode) {
        HeldLock lock = reentrancy.join(key, mode);
        return lock != null ? newHandle(lock) : null;
    }

    /**
     * A lock just granted: its first handle, watched from now on.
     * @param threadBound whether it is re-entrant for its owner thread (false: taken asynchronously)
     */
    public DefaultLockHandle register(HeldLock lock, boolean threadBound) {
        DefaultLockHandle handle = newHandle(lock);
        // before the watchdog sees the lock: a loss found at once is reported through view(), which needs it
        active.put(lock, handle.release());
        if (threadBound) {
            reentrancy.bind(lock);
        }
        else {
            synchronized (lock) {
                lock.unbindFromStart();
            }
            handle.release().unbound();
        }
        watchdog.watch(lock);
        return handle;
    }

    /** The caller has the lock's handle now: a loss is reported to it from now on (one found before, now). */
    public void delivered(HeldLock lock) {
        endings.delivered(lock);
    }

    /** A lock granted to an acquisition cancelled at that moment: released as if its handle were closed. */
    public void releaseUnclaimed(HeldLock lock) {
        endings.release(lock, lock.getAndSetState(HeldLock.State.RELEASED), false);
    }

    /**
     * Takes over a lock handed to a waiter of {@code line}: the lock when it is ready, or null when the waiter must
     * ask Redis itself (it keeps its turn); never completes exceptionally.
     * @param bounded waits for a reply at most the Redis timeout (or until the waiter stops)
     */
    public CompletableFuture<@Nullable HeldLock> takeOver(KeyLine line, HeldLock handed,
            Function<CompletableFuture<?>, CompletableFuture<Void>> bounded) {
        return handOffs.takeOver(line, handed, bounded);
    }

    /**
     * Whether the calling thread holds the key (any key when null) through a lock bound to it, in any engine of
     * this JVM, and its lease is known good (for {@code LockAssert}).
     */
    public static boolean currentThreadHolds(@Nullable String key) {
        return Reentrancy.currentThreadHolds(key);
    }

    /** The lock of a handle, or null for a handle of another engine. */
    public static @Nullable HeldLock lockOf(LockHandle handle) {
        return handle instanceof DefaultLockHandle own ? own.lock() : null;
    }

    @Override
    public CompletableFuture<Void> exit(HeldLock lock, boolean blocking) {
        // counted before the hold is given back: a close() that finds this lock already given back (and so does
        // not release it itself) waits for this release to reach Redis before the connection goes
        endings.releaseStarting();
        try {
            HeldLock.State before = reentrancy.exit(lock);
            if (before == null) {
                return RELEASED;
            }
            active.remove(lock);
            return endings.release(lock, before, blocking);
        }
        finally {
            endings.releaseStarted();
        }
    }

    @Override
    public void unbind(HeldLock lock) {
        reentrancy.unbind(lock);
    }

    @Override
    public boolean extend(HeldLock lock, Duration lease) {
        return leaseExtension.extend(lock, lease);
    }

    @Override
    public void orphaned(HeldLock lock) {
        logger.warn("A handle of " + lock + " taken by thread '" + lock.ownerName()
                + "' was garbage collected without close(); releasing it. Close every LockHandle (try-with-resources).");
    }

    /** A handle on a lock for events and diagnostics; closing it closes the outermost handle. */
    private LockHandle view(HeldLock lock) {
        DefaultLockHandle.Release outermost = active.get(lock);
        return new DefaultLockHandle(lock, outermost != null ? outermost : DefaultLockHandle.Release.closed(lock, this));
    }

    private DefaultLockHandle newHandle(HeldLock lock) {
        DefaultLockHandle.Release release = new DefaultLockHandle.Release(lock, this);
        DefaultLockHandle handle = new DefaultLockHandle(lock, release);
        CLEANER.register(handle, release);
        return handle;
    }

    /** Locks held by this JVM now (for diagnostics and the actuator). */
    public List<LockHandle> heldLocks() {
        List<LockHandle> result = new ArrayList<>();
        active.keySet().forEach(lock -> result.add(view(lock)));
        return result;
    }

    /** Details of the locks held by this JVM now (for the actuator endpoint). */
    public List<HeldLockInfo> details() {
        List<HeldLockInfo> result = new ArrayList<>();
        active.keySet().forEach(lock -> result.add(new HeldLockInfo(lock.key(), lock.mode, lock.fencingToken(),
                (EngineClock.nanoTime() - lock.acquiredAtNanos) / 1_000_000L, lock.leaseLeftMillis(), lock.renewed,
                lock.ownerName(), lock.isHeld())));
        return result;
    }

    public int count() {
        return active.size();
    }

    public int watchedCount() {
        return watchdog.watchedCount();
    }

    /**
     * Shutdown: renewing stops, and what this JVM still holds is released while the connection still works (so
     * others need not wait a lease); returns once Redis answered, or the Redis timeout passed.
     */
    public void releaseAll() {
        watchdog.stop();
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (HeldLock lock : new ArrayList<>(active.keySet())) {
            HeldLock.State before = reentrancy.exitAll(lock);
            if (before != null) {
                logger.info("Releasing " + lock + " at shutdown");
                active.remove(lock);
                releases.add(endings.release(lock, before, false));
            }
        }
        try {
            EngineClock.get(CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)),
                    TimeUnit.MILLISECONDS.toNanos(settings.redisTimeout().toMillis() + 100));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            // each release logged its own failure
        }
        endings.awaitReleasesInFlight();
    }
}
