package dev.leasehold.campaign;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.ForwardingLockServer;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.QueueTry;

/**
 * One instance's real server with the network faults the nemesis switches on at the seam. Every step goes
 * to Redis in the order it was called, as the seam promises; the faults act on the replies: delayed (a
 * slow network), lost (the step ran, its reply never came: the caller sees the driver's timeout), or the
 * connection reset (the step is not sent and fails at once).
 */
final class ChaosLockServer extends ForwardingLockServer {

    enum Mode {
        NONE, DELAY, LOSE, RESET
    }

    private volatile Mode mode = Mode.NONE;

    private volatile long delayMillis;

    private final long timeoutMillis;

    ChaosLockServer(LockServer real, long timeoutMillis) {
        super(real);
        this.timeoutMillis = timeoutMillis;
    }

    void set(Mode mode, long delayMillis) {
        this.delayMillis = delayMillis;
        this.mode = mode;
    }

    void heal() {
        this.mode = Mode.NONE;
    }

    private <T> CompletableFuture<T> through(Supplier<CompletableFuture<T>> step) {
        Mode now = mode;
        if (now == Mode.RESET) {
            return CompletableFuture.failedFuture(new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "connection reset by the campaign's nemesis", null));
        }
        CompletableFuture<T> reply = step.get();
        if (now == Mode.LOSE) {
            CompletableFuture<T> lost = new CompletableFuture<>();
            CompletableFuture.delayedExecutor(timeoutMillis, TimeUnit.MILLISECONDS)
                .execute(() -> lost.completeExceptionally(new LockServerException(LockServerException.Kind.NO_REPLY,
                        "reply lost by the campaign's nemesis", null)));
            return lost;
        }
        if (now == Mode.DELAY) {
            CompletableFuture<T> late = new CompletableFuture<>();
            long delay = delayMillis;
            reply.whenComplete((value, error) -> CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS)
                .execute(() -> {
                    if (error != null) {
                        late.completeExceptionally(error);
                    }
                    else {
                        late.complete(value);
                    }
                }));
            return late;
        }
        return reply;
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        return through(() -> real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry));
    }

    @Override
    public CompletableFuture<Grant> lookWhileQueued(LockKeys keys, String waiterId) {
        return through(() -> real.lookWhileQueued(keys, waiterId));
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        return through(() -> real.renew(keys, mode, token, leaseMillis));
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return through(() -> real.release(keys, mode, token));
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        return through(() -> real.release(keys, mode, token, keepMillis));
    }

    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        return through(() -> real.withdraw(keys, waiterId));
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        return through(() -> real.reserveFences(keys, token, leaseMillis));
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return through(() -> real.isLocked(keys));
    }

    @Override
    public void prepareSubscriptions() {
        real.prepareSubscriptions();
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return through(() -> real.subscribe(channel));
    }
}
