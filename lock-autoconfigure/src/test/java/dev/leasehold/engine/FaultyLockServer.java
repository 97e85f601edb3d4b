package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;

/**
 * A real server with faults switched on by the test: calls go to Redis unless the test cut them,
 * in which case they fail as a network error would. Not a mock: every call that is not cut is real.
 */
final class FaultyLockServer extends ForwardingLockServer {

    private volatile boolean failRenewals;

    private volatile boolean failAcquires;

    private volatile boolean failSubscriptions;

    private volatile boolean hangRenewals;

    private volatile long acquireDelayMillis;

    private volatile boolean hangLooks;

    /** Acquire round trips sent, to count what waiting costs Redis. */
    final java.util.concurrent.atomic.AtomicInteger acquires = new java.util.concurrent.atomic.AtomicInteger();

    FaultyLockServer(LockServer real) {
        super(real);
    }

    void failRenewals(boolean fail) {
        this.failRenewals = fail;
    }

    /** Renewal replies never come (a black-holed connection): the driver's own timeout ends each after 5 s. */
    void hangRenewals(boolean hang) {
        this.hangRenewals = hang;
    }

    void failAcquires(boolean fail) {
        this.failAcquires = fail;
    }

    void failSubscriptions(boolean fail) {
        this.failSubscriptions = fail;
    }

    /** Holds back every acquire reply this long, as a slow network or a first connection would. */
    void delayAcquires(Duration delay) {
        this.acquireDelayMillis = delay.toMillis();
    }

    /** A queued waiter's looks get no reply (a black-holed connection; the engine's Redis timeout ends each). */
    void hangLooks(boolean hang) {
        this.hangLooks = hang;
    }

    @Override
    public CompletableFuture<Grant> lookWhileQueued(LockKeys keys, String waiterId) {
        return hangLooks ? new CompletableFuture<>() : real.lookWhileQueued(keys, waiterId);
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        acquires.incrementAndGet();
        if (failAcquires) {
            return CompletableFuture.failedFuture(new java.io.IOException("acquire cut off by the test"));
        }
        CompletableFuture<Grant> reply = real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry);
        long delay = acquireDelayMillis;
        return delay == 0 ? reply
                : reply.thenApplyAsync(grant -> grant, CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS));
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        if (failRenewals) {
            return CompletableFuture.failedFuture(new java.io.IOException("renewal cut off by the test"));
        }
        if (hangRenewals) {
            return new CompletableFuture<Boolean>().orTimeout(5, TimeUnit.SECONDS);
        }
        return real.renew(keys, mode, token, leaseMillis);
    }

    /** Cut off like subscriptions: the connection ahead of them opens only once they work again. */
    @Override
    public void prepareSubscriptions() {
        if (!failSubscriptions) {
            real.prepareSubscriptions();
        }
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        if (failSubscriptions) {
            return CompletableFuture.failedFuture(new java.io.IOException("subscription cut off by the test"));
        }
        return real.subscribe(channel);
    }
}
