package dev.leasehold.engine.server;

import java.util.ArrayList;
import java.util.List;
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
     * on every try), so that {@link #withdraw} removes only its own
     */
    default CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId) {
        return acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, QueueTry.NONE);
    }

    /**
     * Like {@link #acquire(LockKeys, LockMode, String, long, long, String)}; with {@code queueTry} other than
     * {@link QueueTry#NONE} on a
     * server that {@link #queuesWaiters() queues waiters}, a refused request joins (or keeps its place in,
     * and refreshes) the key's fair queue under {@code waiterId}, and a request whose turn came (the key was
     * granted to {@code waiterId} by a release) claims the key.
     */
    CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry);

    /**
     * Whether waiters queue in Redis, first come first served across instances ({@link FairQueue}): a
     * release then grants the key to the queue's head and wakes only that instance, on
     * {@link FairQueue#waiterChannel}; false when every release wakes everyone on {@link LockKeys#channel()}.
     */
    default boolean queuesWaiters() {
        return false;
    }

    /**
     * Reserves the next block of fencing tokens for hand-offs inside this JVM and renews the lease, if
     * {@code token} still holds the exclusive lock; null when it does not (the lock is lost).
     * Servers that cannot fail the future with {@link UnsupportedOperationException}
     * (see {@link #reservesFences()}).
     */
    default CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName()
                + " does not reserve fencing tokens"));
    }

    /** Whether grants reserve fencing tokens for hand-offs, and {@link #reserveFences} works. */
    default boolean reservesFences() {
        return false;
    }

    /**
     * A block of fencing tokens reserved for the holder of a key: {@code first} to {@code last}, all above
     * every token granted before; {@code othersQueued} when other instances queue for the key.
     */
    record FenceBlock(long first, long last, boolean othersQueued) {
    }

    /**
     * Takes back what an acquire may have granted when its caller did not learn the outcome (no reply in time,
     * or it gave up while the acquire was on its way): a compare-and-delete of {@code token}, sent once the
     * acquire's reply came or failed, so that it runs after whatever the acquire still does on the server.
     * Nothing is sent when the acquire was refused for sure. A server of several nodes follows each node's own
     * acquire (a release sent when the whole step answered could overtake a slow node's acquire).
     */
    default void takeBack(CompletableFuture<Grant> acquire, LockKeys keys, LockMode mode, String token) {
        acquire.whenComplete((grant, error) -> {
            if (!LockServerException.refusedForSure(grant, error)) {
                release(keys, mode, token);
            }
        });
    }

    /** Extends the lease if {@code token} still holds it; false when it does not (the lock is lost). */
    CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis);

    /**
     * Renews many leases at once (the watchdog's tick): one answer per renewal, in order, each what
     * {@link #renew} would answer. A server may renew several in one round trip; each renewal is still
     * compare-then-extend on its own key. By default, one {@link #renew} each.
     */
    default List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
        List<CompletableFuture<Boolean>> answers = new ArrayList<>(renewals.size());
        for (Renewal renewal : renewals) {
            answers.add(renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis()));
        }
        return answers;
    }

    /**
     * How many renewals the watchdog hands {@link #renewAll} at once: a thousand, the keys of one script call on one
     * Redis server; a Cluster takes a thousand per master, so that each master's call carries as many.
     */
    default int renewalsPerCall() {
        return 1000;
    }

    /** One lease to renew: what {@link #renew} takes. */
    record Renewal(LockKeys keys, LockMode mode, String token, long leaseMillis) {
    }

    /** Releases if {@code token} still holds it and wakes the waiters; false when it held nothing. */
    CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token);

    /**
     * A waiter that stops waiting without the lock takes back what it left, only its own: a writer's
     * waiting mark (waking the readers it held back), its queue entry, and a grant made to it that it did
     * not claim (passed on to the next in the queue).
     */
    CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId);

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

    /**
     * Waits may come: opens the connection release messages arrive on, in the background, so that the first
     * refused try only has to subscribe its channel. Connecting when a try is first refused left a release
     * published during the connect unseen, and the grant it made to this instance unclaimed until the
     * subscription was confirmed (hundreds of ms on a loaded machine: the key stood free). Never blocks, never
     * fails (a failed connect is retried by the next subscription).
     */
    default void prepareSubscriptions() {
    }

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
    /**
     * Whether the fair queue keeps its entries by the waiting instances' liveness ({@code queue.lua}: one server,
     * not a Cluster): a queued waiter then sleeps until the holder's lease end or its wake-up rather than a refresh
     * interval, and the instance calls {@link #keepAlive} every refresh interval while any of its waiters sleeps.
     */
    default boolean queueLiveness() {
        return false;
    }

    /**
     * A look by an exclusive waiter already queued ({@link #queueLiveness() liveness mode}), between the tries that
     * refresh its queue entry: it reads the key and the waiter's rank and writes nothing (cheaper than a try), so a
     * waiter sends it only while its entry's expiry, set by its last try, still covers the sleep that follows.
     * Completes with null when the waiter must try now (the key is free, granted to it, or held in a way only a try
     * handles, or its entry is gone; and on a server without such a look), else with a refusal for as long as a try
     * would have slept (the holder's lease, at most the refresh interval for the head and a claim timeout more per
     * entry ahead).
     */
    default CompletableFuture<@org.jspecify.annotations.Nullable Grant> lookWhileQueued(LockKeys keys,
            String waiterId) {
        return CompletableFuture.completedFuture(null);
    }

    /** Writes this instance's liveness key ({@link LockKeys#instancePrefix(String)} + its id) for {@code millis}. */
    default CompletableFuture<Void> keepAlive(String livenessKey, long millis) {
        return CompletableFuture.completedFuture(null);
    }

    default CompletableFuture<Void> ping() {
        return isLocked(LockKeys.of("", "leasehold:ping")).thenApply(locked -> null);
    }
}
