package dev.leasehold.engine;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.LockMode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The lock engine: local queueing, re-entrancy, waiting on release messages, the watchdog, and the
 * rules every call keeps (bounded Redis calls, no lock left behind by a lost reply), over one
 * {@link LockServer} that runs the per-server steps.
 * <p>
 * Ownership is a random token per acquisition. Re-entrancy is per thread: a thread that holds a key
 * and locks it again gets a handle on the same acquisition (same fencing token); the lock is released
 * when the last of its handles is closed, from whichever thread.
 */
public class DefaultLockEngine implements LockEngine, AutoCloseable {

    /** Longest logical key accepted, in characters. */
    public static final int MAX_KEY_LENGTH = 1000;

    private static final Log logger = LogFactory.getLog(DefaultLockEngine.class);

    private static final Cleaner CLEANER = Cleaner.create();

    private static final CompletableFuture<Void> RELEASED = CompletableFuture.completedFuture(null);

    private static final long MIN_ERROR_BACKOFF_MILLIS = 50;

    private static final long MAX_ERROR_BACKOFF_MILLIS = 1000;

    /** How long a waiter without a confirmed subscription sleeps before it subscribes again. */
    private static final long SUBSCRIPTION_RETRY_MILLIS = 1000;

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockTokens tokens;

    private final LockObserver observer;

    private final ScheduledThreadPoolExecutor scheduler;

    private final LocalGates gates = new LocalGates();

    private final ReleaseSignals signals;

    private final Watchdog watchdog;

    /** For re-entrancy: the lock each thread holds on each key. */
    private final ConcurrentHashMap<Owner, HeldLock> held = new ConcurrentHashMap<>();

    /** Every lock this engine holds now, attached to a thread or not. */
    private final java.util.Set<HeldLock> active = ConcurrentHashMap.newKeySet();

    /** Threads of this JVM asleep until a release message (or the blocker's lease end). */
    private final java.util.concurrent.atomic.AtomicInteger waiting = new java.util.concurrent.atomic.AtomicInteger();

    private volatile boolean closed;

    public DefaultLockEngine(LockServer server, LockEngineSettings settings, LockObserver observer) {
        this.server = Objects.requireNonNull(server, "server");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.observer = observer != null ? new SafeObserver(observer) : new LockObserver() {
        };
        this.tokens = new LockTokens();
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "leasehold-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.signals = new ReleaseSignals(server, scheduler, settings.subscriptionLinger(), settings.redisTimeout());
        this.watchdog = new Watchdog(server, scheduler, settings.leaseTime(), settings.redisTimeout(), this::lose,
                this.observer);
        this.watchdog.start();
    }

    @Override
    public Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime) {
        return tryLock(key, LockMode.EXCLUSIVE, waitTime, leaseTime);
    }

    @Override
    public LockHandle lock(String key, Duration waitTime) {
        return tryLock(key, waitTime, null).orElseThrow(() -> new LockAcquisitionException(key,
                "Could not lock '" + key + "' within " + waitTime + ": another owner held it"));
    }

    @Override
    public <T> T withLock(String key, Duration waitTime, Supplier<T> action) {
        Objects.requireNonNull(action, "action");
        try (LockHandle handle = lock(key, waitTime)) {
            return action.get();
        }
    }

    @Override
    public boolean isLocked(String key) {
        LockKeys keys = LockKeys.of(settings.keyPrefix(), validKey(key));
        try {
            return server.isLocked(keys).get(settings.redisTimeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while asking Redis whether '" + key + "' is locked", ex);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Redis did not say within " + settings.redisTimeout()
                    + " whether '" + key + "' is locked", unwrap(ex));
        }
    }

    @Override
    public Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, Duration leaseTime) {
        validKey(key);
        Objects.requireNonNull(mode, "mode");
        if (waitTime == null || waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must be zero or positive, was " + waitTime + " (key '" + key + "')");
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero())) {
            throw new IllegalArgumentException("leaseTime must be positive or null for a watchdog lease, was "
                    + leaseTime + " (key '" + key + "')");
        }
        if (closed) {
            throw new IllegalStateException("The lock engine is closed; cannot lock '" + key + "'");
        }
        HeldLock reentered = reenter(key, mode);
        if (reentered != null) {
            return Optional.of(newHandle(reentered));
        }
        return acquire(LockKeys.of(settings.keyPrefix(), key), mode, waitTime, leaseTime);
    }

    private HeldLock reenter(String key, LockMode mode) {
        HeldLock lock = held.get(new Owner(Thread.currentThread(), key));
        if (lock == null) {
            return null;
        }
        if (lock.state.get() != HeldLock.State.HELD) {
            throw new LockAcquisitionException(key, "This thread's lock on '" + key
                    + "' was lost (its lease ran out) and is not released yet; close its handle before locking again");
        }
        if (mode != LockMode.READ && !lock.exclusive()) {
            throw new IllegalStateException("This thread holds a READ lock on '" + key
                    + "' and asked for " + mode + ": upgrading a read lock would deadlock; release it first");
        }
        lock.holds.incrementAndGet();
        lock.threadBoundHolds.incrementAndGet();
        return lock;
    }

    private Optional<LockHandle> acquire(LockKeys keys, LockMode mode, Duration waitTime, Duration leaseTime) {
        long startedAt = System.nanoTime();
        long deadline = startedAt + waitTime.toNanos();
        boolean renewed = leaseTime == null;
        long leaseMillis = renewed ? settings.leaseTime().toMillis() : Math.max(1, leaseTime.toMillis());
        LocalGates.Gate gate = gates.join(keys.logicalKey());
        boolean granted = false;
        try {
            if (!gate.enter(deadline - System.nanoTime())) {
                observer.notAcquired(keys.logicalKey(), mode, System.nanoTime() - startedAt, null);
                return Optional.empty();
            }
            try {
                HeldLock lock = acquireAtHeadOfQueue(keys, mode, leaseMillis, renewed, deadline, gate);
                if (lock == null) {
                    observer.notAcquired(keys.logicalKey(), mode, System.nanoTime() - startedAt, null);
                    return Optional.empty();
                }
                granted = true;
                observer.acquired(keys.logicalKey(), mode, System.nanoTime() - startedAt);
                return Optional.of(register(lock));
            }
            catch (LockAcquisitionException ex) {
                observer.notAcquired(keys.logicalKey(), mode, System.nanoTime() - startedAt, ex.getCause());
                throw ex;
            }
            finally {
                if (!granted || mode == LockMode.READ) {
                    gate.exit();
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LockAcquisitionException(keys.logicalKey(), "Interrupted while waiting for '" + keys.logicalKey() + "'", ex);
        }
        finally {
            if (!granted) {
                gate.leave();
            }
        }
    }

    /** Tries, then waits for a release message or the blocker's lease end, until granted or the deadline. */
    private HeldLock acquireAtHeadOfQueue(LockKeys keys, LockMode mode, long leaseMillis, boolean renewed,
            long deadline, LocalGates.Gate gate) throws InterruptedException {
        ReleaseSignals.Registration registration = null;
        Throwable lastError = null;
        long errorBackoff = MIN_ERROR_BACKOFF_MILLIS;
        try {
            while (true) {
                if (registration != null && !registration.subscribed()) {
                    // no release message can come: subscribe again rather than sleep out the holder's lease
                    registration.close();
                    registration = signals.register(keys.channel());
                }
                ReleaseSignals.Pending pendingBeforeTry = registration == null ? signals.pending(keys.channel()) : null;
                CompletableFuture<Void> release = registration != null ? registration.nextRelease()
                        : pendingBeforeTry != null ? pendingBeforeTry.nextRelease() : null;
                String token = tokens.next();
                long writerWaitingMillis = mode == LockMode.READ ? 0
                        : Math.min(leaseMillis, Math.max(0, (deadline - System.nanoTime()) / 1_000_000L));
                long sentAt = System.nanoTime();
                Grant grant = null;
                try {
                    grant = server.acquire(keys, mode, token, leaseMillis, writerWaitingMillis)
                        .get(settings.redisTimeout().toNanos(), TimeUnit.NANOSECONDS);
                    lastError = null;
                }
                catch (TimeoutException ex) {
                    lastError = ex;
                    // the write may still land: take back whatever this token might have been granted
                    server.release(keys, mode, token);
                }
                catch (InterruptedException ex) {
                    // likewise: the caller gives up, but the write is on its way
                    server.release(keys, mode, token);
                    throw ex;
                }
                catch (java.util.concurrent.ExecutionException ex) {
                    lastError = unwrap(ex);
                }
                if (grant != null && grant.granted()) {
                    return new HeldLock(keys, mode, token, grant.fencingToken(), Thread.currentThread(), renewed,
                            leaseMillis, server.validMillis(leaseMillis), sentAt, gate);
                }
                long leftNanos = deadline - System.nanoTime();
                if (leftNanos <= 0) {
                    if (lastError != null) {
                        throw new LockAcquisitionException(keys.logicalKey(), "Could not lock '" + keys.logicalKey()
                                + "': Redis did not answer (" + lastError + ")", lastError);
                    }
                    return null;
                }
                if (grant == null) {
                    // Redis is failing: back off, bounded by the deadline (no busy loop)
                    Thread.sleep(Math.min(errorBackoff, Math.max(1, leftNanos / 1_000_000L)));
                    errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
                    continue;
                }
                if (registration == null) {
                    registration = signals.register(keys.channel());
                    if (!registration.covers(pendingBeforeTry)) {
                        // newly subscribed: a release between the try and the subscription was not seen, so try again
                        continue;
                    }
                    // already subscribed before the try: any release since then completes `release`
                }
                long waitNanos = Math.min(leftNanos, TimeUnit.MILLISECONDS.toNanos(grant.blockedForMillis()));
                if (!registration.subscribed()) {
                    waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(SUBSCRIPTION_RETRY_MILLIS));
                }
                waiting.incrementAndGet();
                try {
                    release.get(waitNanos, TimeUnit.NANOSECONDS);
                }
                catch (TimeoutException ex) {
                    // no message: the holder's lease may have ended; look again
                }
                catch (java.util.concurrent.ExecutionException ex) {
                    // never completed exceptionally
                }
                finally {
                    waiting.decrementAndGet();
                }
            }
        }
        finally {
            if (registration != null) {
                registration.close();
            }
        }
    }

    @Override
    public void detachFromThread(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            own.release().detach();
        }
    }

    /** A handle stopped tying the lock to its thread: the last one ends re-entrancy for that thread. */
    void unbind(HeldLock lock) {
        if (lock.threadBoundHolds.decrementAndGet() == 0) {
            held.remove(new Owner(lock.owner, lock.key()), lock);
        }
    }

    private LockHandle register(HeldLock lock) {
        DefaultLockHandle handle = newHandle(lock);
        // before the watchdog sees the lock: a lease found lost at once is reported through view(), which needs it
        lock.outermostRelease = handle.release();
        held.put(new Owner(lock.owner, lock.key()), lock);
        active.add(lock);
        watchdog.watch(lock);
        return handle;
    }

    private DefaultLockHandle newHandle(HeldLock lock) {
        DefaultLockHandle.Release release = new DefaultLockHandle.Release(lock, this);
        DefaultLockHandle handle = new DefaultLockHandle(lock, release);
        CLEANER.register(handle, release.onGarbageCollected());
        return handle;
    }

    /**
     * A handle was closed: the last hold releases the lock. Completes once Redis answered, or the Redis
     * timeout passed; it never blocks, so it may be called from an I/O thread.
     */
    CompletableFuture<Void> exit(HeldLock lock) {
        return lock.holds.decrementAndGet() == 0 ? release(lock) : RELEASED;
    }

    private CompletableFuture<Void> release(HeldLock lock) {
        watchdog.forget(lock);
        held.remove(new Owner(lock.owner, lock.key()), lock);
        active.remove(lock);
        HeldLock.State before = lock.state.getAndSet(HeldLock.State.RELEASED);
        observer.released(lock.key(), lock.mode, System.nanoTime() - lock.acquiredAtNanos);
        CompletableFuture<Boolean> reply;
        try {
            reply = server.release(lock.keys, lock.mode, lock.token);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        if (lock.exclusive()) {
            // the next local waiter may go now, not a round trip later: its acquire follows the release on
            // the same connection, and Redis runs them in that order (if the release is lost, it waits as usual)
            lock.gate.exit();
        }
        return reply.orTimeout(settings.redisTimeout().toMillis(), TimeUnit.MILLISECONDS).handle((released, error) -> {
            try {
                if (error != null) {
                    logger.warn("Could not release " + lock + " (" + unwrap(error) + "); it will expire within "
                            + lock.leaseMillis + " ms");
                }
                else if (!released && before == HeldLock.State.HELD) {
                    // the lease ran out before release and nobody noticed yet (e.g. a fixed lease just expired)
                    lock.state.set(HeldLock.State.LOST);
                    reportLost(lock, "it was no longer held in Redis when released (the lease ran out)");
                    lock.state.set(HeldLock.State.RELEASED);
                }
            }
            finally {
                lock.gate.leave();
            }
            return null;
        });
    }

    @Override
    public CompletableFuture<Void> closeAsync(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            return own.release().runAsync();
        }
        return CompletableFuture.runAsync(handle::close);
    }

    /** The watchdog found the lease lost. */
    private void lose(HeldLock lock, String reason) {
        if (lock.state.compareAndSet(HeldLock.State.HELD, HeldLock.State.LOST)) {
            reportLost(lock, reason);
        }
    }

    private void reportLost(HeldLock lock, String reason) {
        logger.warn("Lost " + lock + " held by thread '" + lock.owner.getName() + "': " + reason
                + ". Another owner may hold it now; work done under it is no longer protected.");
        observer.lost(lock.view(), reason);
    }

    void orphaned(HeldLock lock) {
        logger.warn("A handle of " + lock + " taken by thread '" + lock.owner.getName()
                + "' was garbage collected without close(); releasing it. Close every LockHandle (try-with-resources).");
    }

    private static String validKey(String key) {
        if (key == null) {
            throw new LockKeyException("Lock key must not be null");
        }
        if (key.isBlank()) {
            throw new LockKeyException("Lock key must not be blank, was '" + key + "'");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new LockKeyException("Lock key must be at most " + MAX_KEY_LENGTH + " characters, was "
                    + key.length() + " ('" + key.substring(0, 40) + "...')");
        }
        return key;
    }

    private static Throwable unwrap(Throwable ex) {
        return (ex instanceof java.util.concurrent.ExecutionException || ex instanceof java.util.concurrent.CompletionException)
                && ex.getCause() != null ? ex.getCause() : ex;
    }

    /** Locks held by this JVM now (for diagnostics and the actuator). */
    public List<LockHandle> heldLocks() {
        List<LockHandle> result = new ArrayList<>();
        active.forEach(lock -> result.add(lock.view()));
        return result;
    }

    /** Details of the locks held by this JVM now (for the actuator endpoint). */
    public List<HeldLockInfo> heldLockDetails() {
        List<HeldLockInfo> result = new ArrayList<>();
        active.forEach(lock -> result.add(lock.info()));
        return result;
    }

    /** How many locks this JVM holds now. */
    public int heldLockCount() {
        return active.size();
    }

    public String instanceId() {
        return tokens.instanceId();
    }

    /**
     * Threads of this JVM that wait for a release message now. Waiters queued behind them for the same
     * key (in the local queue) are not counted: they cost Redis nothing.
     */
    public int waitingCount() {
        return waiting.get();
    }

    int localGateCount() {
        return gates.size();
    }

    int subscribedChannelCount() {
        return signals.subscribedChannels();
    }

    int watchedCount() {
        return watchdog.watchedCount();
    }

    /** Stops renewing, releases what this JVM still holds (so others need not wait a lease), and frees threads. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        watchdog.stop();
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (HeldLock lock : new ArrayList<>(active)) {
            if (lock.state.get() == HeldLock.State.HELD) {
                logger.info("Releasing " + lock + " at shutdown");
                lock.holds.set(1);
                releases.add(exit(lock));
            }
        }
        try {
            CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                .get(settings.redisTimeout().toMillis() + 100, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            // each release logged its own failure
        }
        signals.close();
        scheduler.shutdownNow();
    }

    private record Owner(Thread thread, String key) {
    }

    /** Keeps a failing observer from breaking locking. */
    private record SafeObserver(LockObserver delegate) implements LockObserver {

        @Override
        public void acquired(String key, LockMode mode, long waitedNanos) {
            run(() -> delegate.acquired(key, mode, waitedNanos));
        }

        @Override
        public void notAcquired(String key, LockMode mode, long waitedNanos, Throwable error) {
            run(() -> delegate.notAcquired(key, mode, waitedNanos, error));
        }

        @Override
        public void released(String key, LockMode mode, long heldNanos) {
            run(() -> delegate.released(key, mode, heldNanos));
        }

        @Override
        public void lost(LockHandle handle, String reason) {
            run(() -> delegate.lost(handle, reason));
        }

        @Override
        public void renewalFailed(int locks) {
            run(() -> delegate.renewalFailed(locks));
        }

        private static void run(Runnable call) {
            try {
                call.run();
            }
            catch (RuntimeException ex) {
                logger.error("LockObserver failed", ex);
            }
        }
    }
}
