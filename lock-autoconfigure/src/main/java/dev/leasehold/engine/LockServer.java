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
 * release's reply, and takes back an acquire whose outcome it did not learn by a release sent after it.
 * A step's future completes exceptionally with a {@link LockServerException} when it did not complete, and
 * it always completes (the driver's own timeout bounds it), so a step chained after it runs after it.
 */
public interface LockServer extends AutoCloseable {

    /**
     * Takes the lock for {@code token} if free; on success the answer carries a fencing token that is
     * higher than any this server granted before for the key.
     * @param writerWaitingMillis for an exclusive request refused because of readers, how long to keep
     * new readers out so they do not starve it; 0 for none
     * @param waiterId names the waiting writer's mark, the same over all tries of one wait (tokens are new
     * on every try), so that {@link #withdrawWriter} removes only its own
     */
    CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId);

    /** Extends the lease if {@code token} still holds it; false when it does not (the lock is lost). */
    CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis);

    /** Releases if {@code token} still holds it and wakes the waiters; false when it held nothing. */
    CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token);

    /**
     * A writer that stops waiting without the lock removes its waiting mark (if it is still its own) and
     * wakes the readers it held back.
     */
    CompletableFuture<Boolean> withdrawWriter(LockKeys keys, String waiterId);

    /** Whether anyone holds the key in any mode. */
    CompletableFuture<Boolean> isLocked(LockKeys keys);

    /**
     * Where release messages go: called with the channel name, on an I/O thread, so it must not block.
     * A confirmation that the server (re)subscribed a channel is delivered the same way, since a release
     * may have been missed while it was not subscribed.
     */
    void onRelease(Consumer<String> channelListener);

    /**
     * Called (on an I/O thread, must not block) when the subscription connection dropped: until a channel
     * is confirmed again (a message or confirmation on it), its release messages may be lost.
     */
    void onSubscriptionLost(Runnable listener);

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

    /**
     * What the server holds for the key now (holder's mode, readers, lease left, fencing counter), read
     * without changing anything; it never returns an owner token.
     */
    CompletableFuture<KeyState> inspect(LockKeys keys);

    @Override
    void close();

    /**
     * Like {@link #release(LockKeys, LockMode, String)}, except that with {@code keepMillis > 0} the token's
     * lock is not removed but stays taken for {@code keepMillis} more (its TTL set to that, compare-then-set,
     * no wake-up): a {@code holdAtLeast} that has not passed yet. False when the token held nothing.
     */
    default CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        if (keepMillis <= 0) {
            return release(keys, mode, token);
        }
        return CompletableFuture.failedFuture(new UnsupportedOperationException(
                getClass().getName() + " cannot keep a released lock for a holdAtLeast"));
    }

    /** A cheap round trip (PING) on the connection the steps use, for health checks. */
    default CompletableFuture<Void> ping() {
        return isLocked(LockKeys.of("", "leasehold:ping")).thenApply(locked -> null);
    }
}
