package dev.leasehold.engine;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
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

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockTokens tokens;

    private final LockObserver observer;

    private final ScheduledThreadPoolExecutor scheduler;

    private final LocalGates gates = new LocalGates();

    private final ReleaseSignals signals;

    private final Watchdog watchdog;

    private final QueueHeadAcquirer acquirer;

    private final LocalHandOff handOff;

    private final Reentrancy reentrancy = new Reentrancy();

    private final LeaseExtension leaseExtension;

    private final LockEndings endings;

    /** Completes when shutdown begins: waiters give up at once. */
    private final CompletableFuture<Void> shutdown = new CompletableFuture<>();

    public DefaultLockEngine(LockServer server, LockEngineSettings settings, LockObserver observer) {
        this.server = Objects.requireNonNull(server, "server");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.observer = observer != null ? new SafeLockObserver(observer) : new LockObserver() {
        };
        this.tokens = new LockTokens();
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "leasehold-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.signals = new ReleaseSignals(server, scheduler, settings.subscriptionLinger());
        this.handOff = new LocalHandOff(server, settings, shutdown, this::chainLost);
        this.endings = new LockEndings(server, settings, this.observer, handOff);
        this.watchdog = new Watchdog(server, scheduler, settings.leaseTime(), settings.redisTimeout(), endings::lose,
                this.observer);
        this.endings.watchedBy(watchdog);
        this.watchdog.start();
        this.acquirer = new QueueHeadAcquirer(server, settings, tokens, signals, gates, handOff, this.observer, shutdown,
                this::unclaimed);
        this.leaseExtension = new LeaseExtension(server, settings.redisTimeout(), watchdog, endings::lose);
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
        return query(key, "ask Redis whether '" + key + "' is locked", server::isLocked);
    }

    /**
     * What Redis says about one logical key now, read-only (for the actuator endpoint): held or not, mode,
     * readers, lease left and the fencing counter; never an owner token.
     */
    public KeyState inspect(String key) {
        return query(key, "read '" + key + "' from Redis", server::inspect);
    }

    /** A read-only step on one key, bounded by {@code leasehold.redis-timeout}. */
    private <T> T query(String key, String doing, java.util.function.Function<LockKeys, CompletableFuture<T>> step) {
        LockKeys keys = LockKeys.of(settings.keyPrefix(), LockArguments.validKey(key));
        try {
            return step.apply(keys).get(settings.redisTimeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while trying to " + doing, ex);
        }
        catch (java.util.concurrent.TimeoutException ex) {
            throw new IllegalStateException("Could not " + doing + ": no answer within leasehold.redis-timeout ("
                    + settings.redisTimeout() + ")", ex);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not " + doing + ": " + QueueHeadAcquirer.describe(ex),
                    QueueHeadAcquirer.unwrap(ex));
        }
    }

    @Override
    public Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, Duration leaseTime) {
        LockArguments.check(key, mode, waitTime, leaseTime);
        if (shutdown.isDone()) {
            throw QueueHeadAcquirer.shuttingDown(key);
        }
        HeldLock reentered = reentrancy.join(key, mode);
        if (reentered != null) {
            return Optional.of(newHandle(reentered));
        }
        return acquire(LockKeys.of(settings.keyPrefix(), key), mode, waitTime, leaseTime);
    }

    /** A lock granted to an acquisition cancelled at that moment: released as if its handle were closed. */
    private void unclaimed(HeldLock lock) {
        endings.release(lock, lock.state.getAndSet(HeldLock.State.RELEASED));
    }

    private void chainLost(HeldLock lock, String reason) {
        endings.reportChainLost(lock, reason);
    }

    /** Waits for an {@link Acquisition}: the blocking form of {@link #tryLockAsync}, bound to the calling thread. */
    private Optional<LockHandle> acquire(LockKeys keys, LockMode mode, Duration waitTime, Duration leaseTime) {
        CallerThreadSteps steps = new CallerThreadSteps();
        Acquisition acquisition = acquirer.start(keys, mode, waitTime.toNanos(), fixedLease(leaseTime),
                Thread.currentThread(), steps);
        try {
            steps.runUntilDone(acquisition.result());
        }
        catch (InterruptedException ex) {
            boolean cancelled = acquisition.cancel();
            steps.finish(acquisition); // gives back its turn and its place in Redis before this thread leaves
            Thread.currentThread().interrupt();
            if (cancelled) {
                throw new LockAcquisitionException(keys.logicalKey(), "Interrupted while waiting for '"
                        + keys.logicalKey() + "'", ex);
            }
            // it ended at that moment: take what it got, and keep the flag
        }
        HeldLock lock = AsyncOutcome.now(acquisition.result());
        return lock != null ? Optional.of(register(lock, true)) : Optional.empty();
    }

    private static Long fixedLease(Duration leaseTime) {
        return leaseTime != null ? leaseTime.toMillis() : null;
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryLockAsync(String key, Duration waitTime, Duration leaseTime) {
        return tryLockAsync(key, LockMode.EXCLUSIVE, waitTime, leaseTime);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryLockAsync(String key, LockMode mode, Duration waitTime,
            Duration leaseTime) {
        LockArguments.check(key, mode, waitTime, leaseTime);
        if (shutdown.isDone()) {
            return CompletableFuture.failedFuture(QueueHeadAcquirer.shuttingDown(key));
        }
        Acquisition acquisition = acquirer.start(LockKeys.of(settings.keyPrefix(), key), mode, waitTime.toNanos(),
                fixedLease(leaseTime), null, null);
        return AsyncOutcome.of(acquisition, lock -> register(lock, false));
    }
    @Override
    public void detachFromThread(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            own.release().detach();
        }
    }

    /** A handle stopped tying the lock to its thread: the last one ends re-entrancy for that thread. */
    void unbind(HeldLock lock) {
        reentrancy.unbind(lock);
    }

    /** @param threadBound whether it is re-entrant for its owner thread (false: taken asynchronously) */
    private LockHandle register(HeldLock lock, boolean threadBound) {
        DefaultLockHandle handle = newHandle(lock);
        // before the watchdog sees the lock: a lease found lost at once is reported through view(), which needs it
        lock.outermostRelease = handle.release();
        if (threadBound) {
            reentrancy.bind(lock);
        }
        else {
            lock.threadBoundHolds.set(0);
            handle.release().unbound();
        }
        endings.active.add(lock);
        watchdog.watch(lock);
        if (shutdown.isDone()) {
            // granted while shutdown began: release rather than leave it to its lease
            handle.close();
            throw QueueHeadAcquirer.shuttingDown(lock.key());
        }
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
        HeldLock.State before = reentrancy.exit(lock);
        return before != null ? endings.release(lock, before) : RELEASED;
    }

    @Override
    public CompletableFuture<Void> closeAsync(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            return own.release().runAsync();
        }
        return CompletableFuture.runAsync(handle::close);
    }

    void orphaned(HeldLock lock) {
        logger.warn("A handle of " + lock + " taken by thread '" + lock.ownerName()
                + "' was garbage collected without close(); releasing it. Close every LockHandle (try-with-resources).");
    }

    /** Locks held by this JVM now (for diagnostics and the actuator). */
    public List<LockHandle> heldLocks() {
        List<LockHandle> result = new ArrayList<>();
        endings.active.forEach(lock -> result.add(lock.view()));
        return result;
    }

    /** Details of the locks held by this JVM now (for the actuator endpoint). */
    public List<HeldLockInfo> heldLockDetails() {
        List<HeldLockInfo> result = new ArrayList<>();
        endings.active.forEach(lock -> result.add(lock.info()));
        return result;
    }

    /** How many locks this JVM holds now. */
    public int heldLockCount() {
        return endings.active.size();
    }

    public String instanceId() {
        return tokens.instanceId();
    }

    /**
     * Waits of this JVM (blocking or asynchronous) asleep until a release message now. Waiters queued behind
     * them for the same key (in the local queue) are not counted: they cost Redis nothing.
     */
    public int waitingCount() {
        return acquirer.sleeping();
    }

    int localGateCount() {
        return gates.size();
    }

    int locallyQueuedCount() {
        return gates.queued();
    }

    int subscribedChannelCount() {
        return signals.subscribedChannels();
    }

    int watchedCount() {
        return watchdog.watchedCount();
    }

    /**
     * Shuts down: waiters give up at once ("shutting down"), renewing stops, and what this JVM still holds
     * is released (so others need not wait a lease) while the connection still works: the application
     * context calls this before it stops the Redis connection factory. Idempotent.
     */
    @Override
    public void close() {
        if (!shutdown.complete(null)) {
            return;
        }
        signals.wakeAll();
        gates.openAll();
        watchdog.stop();
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (HeldLock lock : new ArrayList<>(endings.active)) {
            HeldLock.State before = reentrancy.exitAll(lock);
            if (before != null) {
                logger.info("Releasing " + lock + " at shutdown");
                releases.add(endings.release(lock, before));
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
        endings.awaitReleasesInFlight();
        signals.close();
        scheduler.shutdownNow();
        acquirer.close();
    }

    /** Whether {@link #close()} has begun. */
    public boolean isClosed() {
        return shutdown.isDone();
    }

    @Override
    public Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime, Duration holdAtLeast) {
        return tryLock(key, LockMode.EXCLUSIVE, waitTime, leaseTime, holdAtLeast);
    }

    @Override
    public Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, Duration leaseTime,
            Duration holdAtLeast) {
        LockArguments.checkHold(key, leaseTime, holdAtLeast);
        Optional<LockHandle> handle = tryLock(key, mode, waitTime, leaseTime);
        if (holdAtLeast != null && !holdAtLeast.isZero() && handle.isPresent()
                && handle.get() instanceof DefaultLockHandle own) {
            HeldLock lock = own.lock();
            // a re-entry keeps the acquisition's hold, or lengthens it
            lock.holdAtLeastMillis = Math.max(lock.holdAtLeastMillis, holdAtLeast.toMillis());
        }
        return handle;
    }

    @Override
    public void holdAtLeast(LockHandle handle, Duration holdAtLeast) {
        if (handle instanceof DefaultLockHandle own && holdAtLeast != null) {
            HeldLock lock = own.lock();
            lock.holdAtLeastMillis = Math.max(lock.holdAtLeastMillis, holdAtLeast.toMillis());
        }
    }

    /** Compare-then-extend of a fixed lease to {@code lease} from now (see {@link LockHandle#extend}). */
    boolean extend(HeldLock lock, Duration lease) {
        return leaseExtension.extend(lock, lease);
    }

    /** A cheap round trip on the engine's connection, bounded by {@code leasehold.redis-timeout} (health checks). */
    public CompletableFuture<Void> ping() {
        CompletableFuture<Void> reply;
        try {
            reply = server.ping();
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        return reply.orTimeout(settings.redisTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The settings this engine runs with. */
    public LockEngineSettings settings() {
        return settings;
    }
}
