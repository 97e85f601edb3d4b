package dev.leasehold.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;

/** A real server behind a test's wrapper: every step goes to it unchanged unless the wrapper overrides it. */
public abstract class ForwardingLockServer implements LockServer {

    protected final LockServer real;

    protected ForwardingLockServer(LockServer real) {
        this.real = real;
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        return real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry);
    }

    @Override
    public void takeBack(CompletableFuture<Grant> acquire, LockKeys keys, LockMode mode, String token) {
        real.takeBack(acquire, keys, mode, token);
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        return real.renew(keys, mode, token, leaseMillis);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return real.release(keys, mode, token);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        return real.release(keys, mode, token, keepMillis);
    }

    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        return real.withdraw(keys, waiterId);
    }

    @Override
    public boolean queuesWaiters() {
        return real.queuesWaiters();
    }

    @Override
    public boolean queueLiveness() {
        return real.queueLiveness();
    }

    @Override
    public CompletableFuture<Grant> lookWhileQueued(LockKeys keys, String waiterId) {
        return real.lookWhileQueued(keys, waiterId);
    }

    @Override
    public CompletableFuture<Void> keepAlive(String livenessKey, long millis) {
        return real.keepAlive(livenessKey, millis);
    }

    @Override
    public boolean reservesFences() {
        return real.reservesFences();
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        return real.reserveFences(keys, token, leaseMillis);
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return real.isLocked(keys);
    }

    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        return real.inspect(keys);
    }

    @Override
    public void onRelease(Consumer<String> channelListener) {
        real.onRelease(channelListener);
    }

    @Override
    public void onSubscriptionLost(Runnable listener) {
        real.onSubscriptionLost(listener);
    }

    @Override
    public void prepareSubscriptions() {
        real.prepareSubscriptions();
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return real.subscribe(channel);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return real.unsubscribe(channel);
    }

    @Override
    public long validMillis(long leaseMillis) {
        return real.validMillis(leaseMillis);
    }

    @Override
    public CompletableFuture<Void> ping() {
        return real.ping();
    }

    @Override
    public void close() {
        real.close();
    }
}
