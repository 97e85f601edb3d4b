package dev.leasehold.engine;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.holding.DefaultLockHandle;
import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.HandOffRules;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLines;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import dev.leasehold.engine.support.LockTokens;
import dev.leasehold.engine.support.StarterThreads;
import dev.leasehold.engine.waiting.Acquisitions;

import org.jspecify.annotations.Nullable;

/**
 * The lock engine's facade: argument checks and the rules every call keeps, over its rooms, each in a package of
 * its own, imports running one way (down this list):
 * <ul>
 * <li>waiting ({@link Acquisitions}): an acquisition's chain of non-blocking steps, its turn in the key's line,
 * the Redis loop, release messages;</li>
 * <li>holding ({@link Holdings}): held locks and their handles, re-entrancy, the watchdog, lease extension,
 * taking over a lock handed off locally, and how a lock ends;</li>
 * <li>the key ({@link dev.leasehold.engine.key.KeyLine}): the one state machine of each key inside this JVM,
 * which waiting and holding talk to instead of to each other;</li>
 * <li>the server seam ({@link LockServer}) with its implementations, {@code redis} and {@code quorum}.</li>
 * </ul>
 * Ownership is a random token per acquisition. Re-entrancy is per thread: a thread that holds a key and locks it
 * again gets a handle on the same acquisition (same fencing token); the lock is released when the last of its
 * handles is closed, from whichever thread.
 */
public class DefaultLockEngine implements LockEngine, AutoCloseable {

    /** Longest logical key accepted, in characters. */
    public static final int MAX_KEY_LENGTH = LockArguments.MAX_KEY_LENGTH;

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockTokens tokens = new LockTokens();

    private final StarterThreads schedulerThreads = new StarterThreads("leasehold-watchdog");

    private final ScheduledThreadPoolExecutor scheduler;

    private final KeyLines lines;

    private final Holdings holdings;

    private final Acquisitions acquisitions;

    /**
     * The Redis names of recently used keys: a key locked again does not build its seven names anew (string
     * building showed in every uncontended lock's profile). Bounded: emptied when it grows past its size.
     */
    private final java.util.concurrent.ConcurrentHashMap<String, LockKeys> recentKeys = new java.util.concurrent.ConcurrentHashMap<>();

    private static final int RECENT_KEYS = 4096;

    /** Limits on Redis replies, checked by one tick (no timer per lock and unlock). */
    private final CoarseTimeouts timeouts = new CoarseTimeouts();

    /** Completes when shutdown begins: waiters give up at once. */
    private final CompletableFuture<Void> shutdown = new CompletableFuture<>();

    public DefaultLockEngine(LockServer server, LockEngineSettings settings, LockObserver observer) {
        this.server = Objects.requireNonNull(server, "server");
        this.settings = Objects.requireNonNull(settings, "settings");
        LockObserver safeObserver = observer != null ? new SafeLockObserver(observer) : new LockObserver() {
        };
        this.scheduler = EngineClock.scheduler(schedulerThreads);
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.lines = new KeyLines(new HandOffRules(settings.handOff().maxTurn(), settings.handOff().turnCheck(),
                settings.redisTimeout(), settings.handOff().linger()));
        this.holdings = new Holdings(server, settings, safeObserver, lines, scheduler, timeouts);
        this.acquisitions = new Acquisitions(server, settings, tokens, lines, holdings, safeObserver, shutdown, timeouts);
    }

    @Override
    public Optional<LockHandle> tryLock(String key, Duration waitTime, @Nullable Duration leaseTime) {
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
    private <T> T query(String key, String doing, Function<LockKeys, CompletableFuture<T>> step) {
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
            throw new IllegalStateException("Could not " + doing + ": " + LockServerException.describe(ex),
                    LockServerException.unwrap(ex));
        }
    }

    @Override
    public Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, @Nullable Duration leaseTime) {
        LockArguments.check(key, mode, waitTime, leaseTime);
        if (shutdown.isDone()) {
            throw shuttingDown(key);
        }
        LockHandle reentered = holdings.reenter(key, mode);
        if (reentered != null) {
            return Optional.of(reentered);
        }
        HeldLock lock = acquisitions.acquire(keysOf(key), mode, LockArguments.waitNanos(waitTime),
                fixedLease(leaseTime));
        if (lock == null) {
            return Optional.empty();
        }
        LockHandle handle = register(lock, true);
        holdings.delivered(lock);
        return Optional.of(handle);
    }

    private LockKeys keysOf(String key) {
        LockKeys keys = recentKeys.get(key);
        if (keys == null) {
            if (recentKeys.size() >= RECENT_KEYS) {
                // the names they kept go with them (held locks keep only the lock's own name)
                recentKeys.values().forEach(LockKeys::forgetNames);
                recentKeys.clear();
            }
            keys = LockKeys.of(settings.keyPrefix(), key);
            LockKeys known = recentKeys.putIfAbsent(key, keys);
            if (known != null) {
                return known;
            }
            keys.keepNames();
        }
        return keys;
    }

    private static @Nullable Long fixedLease(@Nullable Duration leaseTime) {
        return leaseTime != null ? leaseTime.toMillis() : null;
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryLockAsync(String key, Duration waitTime, @Nullable Duration leaseTime) {
        return tryLockAsync(key, LockMode.EXCLUSIVE, waitTime, leaseTime);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryLockAsync(String key, LockMode mode, Duration waitTime,
            @Nullable Duration leaseTime) {
        LockArguments.check(key, mode, waitTime, leaseTime);
        if (shutdown.isDone()) {
            return CompletableFuture.failedFuture(shuttingDown(key));
        }
        return acquisitions.acquireAsync(keysOf(key), mode, LockArguments.waitNanos(waitTime),
                fixedLease(leaseTime), lock -> register(lock, false));
    }

    @Override
    public void detachFromThread(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            own.release().detach();
        }
    }

    /** @param threadBound whether it is re-entrant for its owner thread (false: taken asynchronously) */
    private LockHandle register(HeldLock lock, boolean threadBound) {
        DefaultLockHandle handle = holdings.register(lock, threadBound);
        if (shutdown.isDone()) {
            // granted while shutdown began: release rather than leave it to its lease, without waiting for Redis's
            // answer here: this may be the thread that delivers replies (close() waits for the release instead)
            handle.release().runAsync();
            throw shuttingDown(lock.key());
        }
        return handle;
    }

    @Override
    public CompletableFuture<Void> closeAsync(LockHandle handle) {
        if (handle instanceof DefaultLockHandle own) {
            return own.release().runAsync();
        }
        return CompletableFuture.runAsync(handle::close);
    }

    /** Locks held by this JVM now (for diagnostics and the actuator). */
    public List<LockHandle> heldLocks() {
        return holdings.heldLocks();
    }

    /** Details of the locks held by this JVM now (for the actuator endpoint). */
    public List<HeldLockInfo> heldLockDetails() {
        return holdings.details();
    }

    /** How many locks this JVM holds now. */
    public int heldLockCount() {
        return holdings.count();
    }

    public String instanceId() {
        return tokens.instanceId();
    }

    /**
     * Waits of this JVM (blocking or asynchronous) asleep until a release message now. Waiters queued behind
     * them for the same key (in the local queue) are not counted: they cost Redis nothing.
     */
    public int waitingCount() {
        return acquisitions.sleeping();
    }

    int localGateCount() {
        return lines.size();
    }

    /** Threads of this JVM queued behind another local waiter or holder of their key (diagnostics, tests). */
    public int locallyQueuedCount() {
        return lines.queued();
    }

    int subscribedChannelCount() {
        return acquisitions.subscribedChannels();
    }

    int watchedCount() {
        return holdings.watchedCount();
    }

    /**
     * Shuts down: waiters give up at once ("shutting down"), renewing stops, and what this JVM still holds is
     * released (so others need not wait a lease) while the connection still works: the application context calls
     * this before it stops the Redis connection factory. Returns once the engine's threads ended. Idempotent.
     */
    @Override
    public void close() {
        if (!shutdown.complete(null)) {
            return;
        }
        acquisitions.wakeAll();
        lines.closeAll();
        // steps running now end their acquisitions ("shutting down") and withdraw from the fair queue, waited for,
        // so no thread outlives close() and no release below grants the key to this instance's stale entry
        acquisitions.close();
        holdings.releaseAll();
        schedulerThreads.stop(scheduler, settings.redisTimeout(), true);
        timeouts.close();
    }

    /** Whether {@link #close()} has begun. */
    public boolean isClosed() {
        return shutdown.isDone();
    }

    @Override
    public Optional<LockHandle> tryLock(String key, Duration waitTime, @Nullable Duration leaseTime,
            @Nullable Duration holdAtLeast) {
        return tryLock(key, LockMode.EXCLUSIVE, waitTime, leaseTime, holdAtLeast);
    }

    @Override
    public Optional<LockHandle> tryLock(String key, LockMode mode, Duration waitTime, @Nullable Duration leaseTime,
            @Nullable Duration holdAtLeast) {
        LockArguments.checkHold(key, leaseTime, holdAtLeast);
        Optional<LockHandle> handle = tryLock(key, mode, waitTime, leaseTime);
        HeldLock lock = handle.map(Holdings::lockOf).orElse(null);
        if (holdAtLeast != null && !holdAtLeast.isZero() && lock != null) {
            // a re-entry keeps the acquisition's hold, or lengthens it
            lock.holdAtLeastMillis = Math.max(lock.holdAtLeastMillis, holdAtLeast.toMillis());
        }
        return handle;
    }

    @Override
    public void holdAtLeast(LockHandle handle, Duration holdAtLeast) {
        HeldLock lock = Holdings.lockOf(handle);
        if (lock != null) {
            LockArguments.checkHold(lock.key(), null, holdAtLeast);
        }
        if (lock != null && holdAtLeast != null) {
            lock.holdAtLeastMillis = Math.max(lock.holdAtLeastMillis, holdAtLeast.toMillis());
        }
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

    private static LockAcquisitionException shuttingDown(String key) {
        return new LockAcquisitionException(key, "Could not lock '" + key
                + "': Leasehold is shutting down (the application context is closing)");
    }
}
