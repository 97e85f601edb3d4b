package dev.leasehold.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import dev.leasehold.LockMode;

/**
 * Local hand-off (node-level lock caching, as the lock managers of cluster file systems keep a lock at the
 * node while its processes want it): a thread releasing an exclusive watchdog lock while another thread of
 * this JVM waits for the key gives it the lock directly, with no Redis round trip. The key stays taken in
 * Redis under the same owner token, so to every other instance nothing happened.
 * <p>
 * Why this is as safe as a release and a new acquire:
 * <ul>
 * <li>Mutual exclusion: Redis still holds the key for this JVM under one token; inside the JVM the turn
 * passes from one thread to the next (the previous holder is done before the next is given the lock), as it
 * would through Redis, only without the round trip.</li>
 * <li>Fencing: every hand-off is a new acquisition with its own fencing token, taken from a block the
 * grant reserved in the key's counter (the counter then stands at the block's end, so the next grant to any
 * client is above every token of the block). When the block is used up, the next holder reserves another
 * in one round trip that also checks the token still holds the key and renews its lease. A Redis restart
 * that loses the counter cannot make tokens go back: blocks are a few tokens wide and the counter's rule
 * keeps tokens above the server clock in µs.</li>
 * <li>Leases: a lock is only handed off while the local estimate says its lease holds, and the successor
 * inherits that estimate (not a fresh one); the watchdog renews the successor, and a lease found lost is
 * reported to whoever holds the hand-off chain's end ({@link HeldLock#latest()}).</li>
 * <li>Fairness: turns are gated. Once a token reservation finds another instance queued for the key (at
 * most every {@link FairQueue#FENCE_BLOCK} hand-offs, and at the first hand-off after
 * {@link #TURN_CHECK_MILLIS} without one), the lock goes only to the local waiters that came before the
 * turn's grant or within {@link #TURN_CHECK_MILLIS} of it; then, and after {@link #MAX_TURN_HAND_OFFS}
 * hand-offs in any case, the holder releases through Redis, which grants the key to the queue's head. So a
 * JVM with more waiters gets a longer turn, and no instance keeps the longer queue: instances that get equal
 * shares of the requests wait alike. (Turns that ended after a fixed number of hand-offs, later arrivals
 * included, were fair in count but not in time: they kept whatever split of the waiters the first moments
 * made, and one instance's requests waited several times longer than the other's.)</li>
 * </ul>
 * Only exclusive locks with a watchdog lease are handed off, and only to a waiter that wants one (a fixed
 * lease must start when its owner gets it; a hold-at-least keeps the key taken).
 */
final class LocalHandOff {

    /** Hand-offs in one turn before the key goes back through Redis (other instances get their chance). */
    static final int MAX_TURN_HAND_OFFS = 64;

    /**
     * How long a turn hands off without asking Redis whether other instances queue: with long critical
     * sections, a waiting instance then waits about one section more, not a whole block of them. Once one
     * does, the turn serves only local waiters that came before its grant or within this long after it.
     */
    static final long TURN_CHECK_MILLIS = 50;

    private final LockServer server;

    private final LockEngineSettings settings;

    private final CompletableFuture<Void> shutdown;

    /** Told when a token reservation finds the lease lost: the holders before the successor held it unconfirmed. */
    private final java.util.function.BiConsumer<HeldLock, String> chainLost;

    LocalHandOff(LockServer server, LockEngineSettings settings, CompletableFuture<Void> shutdown,
            java.util.function.BiConsumer<HeldLock, String> chainLost) {
        this.chainLost = chainLost;
        this.server = server;
        this.settings = settings;
        this.shutdown = shutdown;
    }

    /** The turn a lock just granted by Redis starts, or null when it is never handed off. */
    HeldLock.Turn newTurn(LockMode mode, boolean renewed, Grant grant) {
        if (mode == LockMode.READ || !renewed || !server.reservesFences()) {
            return null;
        }
        return new HeldLock.Turn(grant.fencingToken() + 1, grant.reservedThrough());
    }

    /**
     * Hands {@code lock}, being released, to the next local waiter; true when one took it (Redis is not told).
     * The waiter may be bound to no thread (an asynchronous acquisition): its lock then has no owner thread.
     */
    boolean tryHandOff(HeldLock lock, HeldLock.State before) {
        HeldLock.Turn turn = lock.turn;
        if (turn == null || before != HeldLock.State.HELD || shutdown.isDone()
                || turn.handOffs >= MAX_TURN_HAND_OFFS || lock.holdLeftMillis() > 0
                // the successor must not get a lease about to lapse before its watchdog can renew it
                || lock.leaseLeftMillis() <= settings.redisTimeout().toMillis()) {
            return false;
        }
        // once another instance queues, only to waiters that came before the grant or soon after (a gated turn)
        long gateClosesAt = turn.grantedAtNanos + TURN_CHECK_MILLIS * 1_000_000L;
        return lock.gate.handOff(next -> !turn.closing || next.enteredAtNanos() - gateClosesAt < 0,
                (thread, mode) -> successorOf(lock, thread, mode));
    }

    private HeldLock successorOf(HeldLock lock, Thread thread, LockMode mode) {
        HeldLock.Turn turn = lock.turn;
        // 0: the successor reserves more tokens first, which also tells whether other instances queue: when
        // the block is used up, or when that was last asked more than TURN_CHECK_MILLIS ago (long sections)
        boolean checkDue = System.nanoTime() - turn.checkedAtNanos > TURN_CHECK_MILLIS * 1_000_000L;
        long fence = turn.nextFence <= turn.lastFence && !checkDue ? turn.nextFence++ : 0;
        turn.handOffs++;
        long sentAt = lock.leaseEndsAtNanos - lock.validMillis * 1_000_000L; // inherits the lease estimate
        HeldLock successor = new HeldLock(lock.keys, mode, lock.token, fence, thread, true, lock.leaseMillis,
                lock.validMillis, sentAt, lock.gate, turn);
        lock.successor = successor;
        lock.gatePassedOn();
        return successor;
    }

    /**
     * What a waiter does with a lock handed to it: {@code lock} when it is ready; otherwise whether the waiter
     * still has its turn at the gate (it then acquires through Redis) or lost it (the lease was found lost
     * while the hand-off was on its way, which passed the turn on: it waits for a turn again).
     */
    record TakeOver(HeldLock lock, boolean turnKept) {
    }

    /**
     * Takes over a lock handed to a waiter; never blocks, never completes exceptionally.
     * @param bounded waits for a reply at most the Redis timeout (or until the waiter stops)
     */
    CompletableFuture<TakeOver> takeOver(HeldLock lock,
            Function<CompletableFuture<?>, CompletableFuture<Void>> bounded) {
        if (lock.fencingToken != 0) {
            return CompletableFuture.completedFuture(heldOrLost(lock));
        }
        // the block is used up: one round trip reserves the next and renews the lease
        long sentAt = System.nanoTime();
        CompletableFuture<LockServer.FenceBlock> reply;
        try {
            reply = server.reserveFences(lock.keys, lock.token, lock.leaseMillis);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<LockServer.FenceBlock> reserved = reply;
        return bounded.apply(reserved).thenApply(ignored -> {
            if (reserved.isDone() && !reserved.isCompletedExceptionally()) {
                LockServer.FenceBlock block = reserved.join();
                if (block == null) {
                    // the token no longer holds the key: the lease was lost under the holders before this one
                    chainLost.accept(lock, "Redis no longer held the key when the next fencing tokens were reserved");
                    return giveUp(lock);
                }
                HeldLock.Turn turn = lock.turn;
                turn.checkedAtNanos = System.nanoTime();
                turn.nextFence = block.first() + 1;
                turn.lastFence = block.last();
                turn.closing |= block.othersQueued();
                lock.leaseEndsAtNanos = sentAt + lock.validMillis * 1_000_000L;
                turn.confirmed = lock;
                lock.fencingToken = block.first();
                return heldOrLost(lock);
            }
            // no answer (or the waiter gave up): whether the key is still ours is unknown; give it back once
            // the reply is in (the reservation may still run): compare-and-delete
            reserved.whenComplete((block, error) -> server.release(lock.keys, lock.mode, lock.token));
            return giveUp(lock);
        });
    }

    private static TakeOver heldOrLost(HeldLock lock) {
        return lock.state.get() == HeldLock.State.HELD ? new TakeOver(lock, true) : new TakeOver(null, false);
    }

    private TakeOver giveUp(HeldLock lock) {
        if (lock.state.compareAndSet(HeldLock.State.HELD, HeldLock.State.RELEASED)) {
            lock.gatePassedOn(); // the turn stays with this thread, which now goes to Redis
            return new TakeOver(null, true);
        }
        return new TakeOver(null, false); // found lost meanwhile: losing it passed the turn on
    }
}
