package dev.leasehold.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;

/**
 * What the thread at the head of a key's local queue does: try, and until granted or out of time, sleep
 * until a release message, the blocker's lease end or its own deadline, then try again.
 * <p>
 * On a server that {@link LockServer#queuesWaiters() queues waiters}, a refused try puts this instance in
 * the key's fair queue in Redis (one entry per instance, kept by every try, so it tries at least every
 * {@link FairQueue#REFRESH_MILLIS}); the release that makes it the head grants it the key and wakes this
 * instance alone, on its own channel, and the next try claims the key. A waiter that gives up takes its
 * entry, and a grant it did not claim, back ({@link LockServer#withdraw}).
 * <p>
 * An acquire whose outcome this thread did not learn (no reply in time, a connection reset, an interrupt)
 * may still run on the server later and grant the key to nobody. It is taken back by a compare-and-delete
 * sent when its reply future completes: the server step completes only after the last command it sent
 * (a NOSCRIPT fallback included), and steps on one connection run in order, so the take-back always runs
 * after whatever the acquire may still do.
 */
final class QueueHeadAcquirer {

    private static final long MIN_ERROR_BACKOFF_MILLIS = 50;

    private static final long MAX_ERROR_BACKOFF_MILLIS = 1000;

    /** How often a waiter looks again while its channel is not (or no longer) confirmed subscribed. */
    static final long UNSUBSCRIBED_RECHECK_MILLIS = 1000;

    private final LockServer server;

    private final LockEngineSettings settings;

    private final LockTokens tokens;

    private final ReleaseSignals signals;

    /** Completes when the engine shuts down: every sleeping waiter wakes and gives up. */
    private final CompletableFuture<Void> shutdown;

    private final LocalHandOff handOff;

    /** Threads of this JVM asleep until a release message (or the blocker's lease end). */
    private final AtomicInteger sleeping = new AtomicInteger();

    QueueHeadAcquirer(LockServer server, LockEngineSettings settings, LockTokens tokens, ReleaseSignals signals,
            CompletableFuture<Void> shutdown, LocalHandOff handOff) {
        this.handOff = handOff;
        this.server = server;
        this.settings = settings;
        this.tokens = tokens;
        this.signals = signals;
        this.shutdown = shutdown;
    }

    int sleeping() {
        return sleeping.get();
    }

    /** The granted lock, or null when the deadline passed while others held the key. */
    HeldLock acquire(LockKeys keys, LockMode mode, long leaseMillis, boolean renewed, long deadline,
            LocalGates.Gate gate) throws InterruptedException {
        // one id per instance: its queue entry (and writer mark) is the instance's, whichever thread waits
        String waiterId = tokens.instanceId();
        boolean queues = server.queuesWaiters();
        String channel = queues ? FairQueue.waiterChannel(keys, waiterId) : keys.channel();
        ReleaseSignals.Registration registration = null;
        CompletableFuture<Grant> lastReply = null;
        boolean leftSomethingBehind = false;
        HeldLock granted = null;
        Throwable lastError = null;
        long errorBackoff = MIN_ERROR_BACKOFF_MILLIS;
        try {
            while (true) {
                checkRunning(keys);
                if (registration != null && !registration.subscribed()) {
                    // no release message can come: subscribe again rather than sleep out the holder's lease
                    registration.close();
                    registration = signals.register(channel, deadline);
                }
                ReleaseSignals.Pending pendingBeforeTry = registration == null ? signals.pending(channel) : null;
                CompletableFuture<Void> release = registration != null ? registration.nextRelease()
                        : pendingBeforeTry != null ? pendingBeforeTry.nextRelease() : null;
                String token = tokens.next();
                // a queued writer keeps new readers out by its place in the queue; without a queue, by a mark
                long writerWaitingMillis = mode == LockMode.READ || queues ? 0
                        : Math.min(leaseMillis, Math.max(0, (deadline - System.nanoTime()) / 1_000_000L));
                long sentAt = System.nanoTime();
                boolean joinQueue = queues && deadline - sentAt > 0;
                CompletableFuture<Grant> reply = server.acquire(keys, mode, token, leaseMillis, writerWaitingMillis,
                        waiterId, joinQueue);
                lastReply = reply;
                Grant grant = null;
                try {
                    grant = reply.get(settings.redisTimeout().toNanos(), TimeUnit.NANOSECONDS);
                    lastError = null;
                }
                catch (TimeoutException ex) {
                    lastError = new LockServerException(LockServerException.Kind.NO_REPLY,
                            "no reply within leasehold.redis-timeout (" + settings.redisTimeout() + ")", ex);
                    takeBackAfter(reply, keys, mode, token);
                }
                catch (InterruptedException ex) {
                    takeBackAfter(reply, keys, mode, token); // the caller gives up, but the write is on its way
                    throw ex;
                }
                catch (ExecutionException ex) {
                    lastError = ex.getCause() != null ? ex.getCause() : ex;
                    takeBackAfter(reply, keys, mode, token);
                }
                if (grant != null && grant.granted()) {
                    if (shutdown.isDone()) {
                        server.release(keys, mode, token);
                        checkRunning(keys);
                    }
                    granted = new HeldLock(keys, mode, token, grant.fencingToken(), Thread.currentThread(), renewed,
                            leaseMillis, server.validMillis(leaseMillis), sentAt, gate,
                            handOff.newTurn(mode, renewed, grant));
                    return granted;
                }
                leftSomethingBehind |= writerWaitingMillis > 0 || joinQueue;
                long leftNanos = deadline - System.nanoTime();
                if (leftNanos <= 0) {
                    if (lastError != null) {
                        throw new LockAcquisitionException(keys.logicalKey(), "Could not lock '" + keys.logicalKey()
                                + "': " + describe(lastError), lastError);
                    }
                    return null;
                }
                if (grant == null) {
                    // Redis is failing: back off, bounded by the deadline (no busy loop)
                    sleepUntilShutdown(Math.min(errorBackoff, Math.max(1, leftNanos / 1_000_000L)));
                    errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
                    continue;
                }
                if (registration == null) {
                    registration = signals.register(channel, deadline);
                    if (!registration.covers(pendingBeforeTry)) {
                        // newly subscribed: a release between the try and the subscription was not seen, so try again
                        continue;
                    }
                    // already subscribed before the try: any release since then completes `release`
                }
                long waitNanos = Math.min(leftNanos, TimeUnit.MILLISECONDS.toNanos(queues
                        ? Math.min(grant.blockedForMillis(), FairQueue.REFRESH_MILLIS) : grant.blockedForMillis()));
                if (!registration.subscribed()) {
                    waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(UNSUBSCRIBED_RECHECK_MILLIS));
                }
                sleeping.incrementAndGet();
                try {
                    release.get(waitNanos, TimeUnit.NANOSECONDS);
                }
                catch (TimeoutException ex) {
                    // no message: the holder's lease may have ended; look again
                }
                catch (ExecutionException ex) {
                    // never completed exceptionally
                }
                finally {
                    sleeping.decrementAndGet();
                }
            }
        }
        finally {
            if (registration != null) {
                registration.close();
            }
            if (granted == null && leftSomethingBehind) {
                withdrawAfter(lastReply, keys, waiterId);
            }
        }
    }

    /** Takes back whatever the acquire may have granted, once its reply came (or failed). */
    private void takeBackAfter(CompletableFuture<Grant> reply, LockKeys keys, LockMode mode, String token) {
        reply.whenComplete((grant, error) -> {
            boolean refusedForSure = grant != null ? !grant.granted()
                    : unwrap(error) instanceof LockServerException failure
                            && failure.kind() == LockServerException.Kind.REFUSED;
            if (!refusedForSure) {
                server.release(keys, mode, token);
            }
        });
    }

    /**
     * A waiter that leaves without the lock takes back its writer mark, queue entry and unclaimed grant
     * (best effort, after its last try; an entry left behind expires on its own).
     */
    private void withdrawAfter(CompletableFuture<Grant> lastReply, LockKeys keys, String waiterId) {
        lastReply.handle((grant, error) -> null).thenCompose(ignored -> server.withdraw(keys, waiterId));
    }

    private void sleepUntilShutdown(long millis) throws InterruptedException {
        try {
            shutdown.get(millis, TimeUnit.MILLISECONDS);
        }
        catch (TimeoutException | ExecutionException ex) {
            // slept the whole time
        }
    }

    private void checkRunning(LockKeys keys) {
        if (shutdown.isDone()) {
            throw shuttingDown(keys.logicalKey());
        }
    }

    static LockAcquisitionException shuttingDown(String key) {
        return new LockAcquisitionException(key, "Could not lock '" + key
                + "': Leasehold is shutting down (the application context is closing)");
    }

    static String describe(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockServerException) {
            return cause.getMessage();
        }
        return "Redis call failed (" + cause + ")";
    }

    static Throwable unwrap(Throwable ex) {
        return (ex instanceof ExecutionException || ex instanceof java.util.concurrent.CompletionException)
                && ex.getCause() != null ? ex.getCause() : ex;
    }
}
