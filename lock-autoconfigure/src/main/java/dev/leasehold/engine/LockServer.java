package dev.leasehold.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import dev.leasehold.LockMode;

/**
 * The per-server steps of the lock protocol: acquire, renew, release, and the wake-up channel.
 * Each step is one atomic round trip and answers asynchronously, so an engine can run the same step
 * on several servers at once (the quorum mode) and bound every call in time.
 * {@link LockMode#WRITE} and {@link LockMode#EXCLUSIVE} are the same lock.
 * <p>
 * Steps on one key run on the server in the order they were called (one ordered connection per server):
 * the engine lets the next local waiter send its acquire right behind a release, without waiting for the
 * release's reply.
 */
public interface LockServer extends AutoCloseable {

    /**
     * Takes the lock for {@code token} if free; on success the answer carries a fencing token that is
     * higher than any this server granted before for the key.
     * @param writerWaitingMillis for an exclusive request refused because of readers, how long to keep
     * new readers out so they do not starve it; 0 for none
     */
    CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis);

    /** Extends the lease if {@code token} still holds it; false when it does not (the lock is lost). */
    CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis);

    /** Releases if {@code token} still holds it and wakes the waiters; false when it held nothing. */
    CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token);

    /** Whether anyone holds the key in any mode. */
    CompletableFuture<Boolean> isLocked(LockKeys keys);

    /** Where release messages go: called with the channel name, on an I/O thread, so it must not block. */
    void onRelease(Consumer<String> channelListener);

    /** Starts receiving release messages of a channel; completes once the server confirmed. */
    CompletableFuture<Void> subscribe(String channel);

    /** Stops receiving release messages of a channel. */
    CompletableFuture<Void> unsubscribe(String channel);

    /**
     * How long after sending a successful acquire or renewal the holder may count on the lease: the lease
     * itself on one server; in quorum mode the lease less the allowance for clock drift between the nodes
     * (the time the round trips took is subtracted by measuring from the send).
     */
    default long validMillis(long leaseMillis) {
        return leaseMillis;
    }

    @Override
    void close();
}
