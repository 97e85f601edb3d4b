package dev.leasehold.engine.waiting;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * The tries one {@link Acquisition} sends to Redis: the last one (its reply, owner token, when it was sent), and
 * what they may have left there for a waiter that gives up to take back (a writer mark, the instance's queue
 * entry, a grant it did not claim). Touched by the acquisition's steps only, one at a time.
 */
final class Tries {

    private final WaitContext context;
    private final LockKeys keys;
    private final LockMode mode;
    private final long leaseMillis;
    private final String waiterId;
    private final boolean queues;

    private @Nullable CompletableFuture<Grant> reply;
    private @Nullable String token;
    private long sentAt;
    private boolean joinedQueue;
    /**
     * What the last try did with the queue; {@link QueueTry#NONE} once a try went unanswered (in the queue or not, who
     * knows). A try after one refused in the queue keeps that place ({@link QueueTry#QUEUED}: no uncontended look,
     * no liveness write, which the heartbeat then does).
     */
    private QueueTry lastTry = QueueTry.NONE;
    private long writerWaitingMillis;
    private boolean leftSomethingBehind;

    Tries(WaitContext context, LockKeys keys, LockMode mode, long leaseMillis, String waiterId, boolean queues) {
        this.context = context;
        this.keys = keys;
        this.mode = mode;
        this.leaseMillis = leaseMillis;
        this.waiterId = waiterId;
        this.queues = queues;
    }

    /** Sends a try with a fresh owner token; a waiter with time left joins (or keeps) its place in the queue. */
    CompletableFuture<Grant> send(long deadline) {
        token = context.tokens.next();
        // a queued writer keeps new readers out by its place in the queue; without a queue, by a mark
        writerWaitingMillis = mode == LockMode.READ || queues ? 0
                : Math.min(leaseMillis, Math.max(0, (deadline - EngineClock.nanoTime()) / 1_000_000L));
        sentAt = EngineClock.nanoTime();
        joinedQueue = queues && deadline - sentAt > 0;
        CompletableFuture<Grant> sent;
        try {
            lastTry = !joinedQueue ? QueueTry.NONE : lastTry.joins() ? QueueTry.QUEUED : QueueTry.JOIN;
            sent = context.server.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, lastTry);
        }
        catch (RuntimeException ex) {
            sent = CompletableFuture.failedFuture(ex);
        }
        reply = sent;
        return sent;
    }

    /** The last try's reply. */
    CompletableFuture<Grant> reply() {
        return Objects.requireNonNull(reply, "a try was sent");
    }

    /** The last try's owner token. */
    String token() {
        return Objects.requireNonNull(token, "sent with its token");
    }

    /** When the last try was sent ({@link EngineClock#nanoTime()}). */
    long sentAt() {
        return sentAt;
    }

    /** Whether the last try joined (or kept) a place in the queue. */
    boolean joinedQueue() {
        return joinedQueue;
    }

    /** Whether the last try was refused while the instance already had its place in the queue. */
    boolean keptPlace() {
        return lastTry == QueueTry.QUEUED;
    }

    /** The last try was not granted: what it may have left behind; null: no answer (in the queue or not, who knows). */
    void notGranted(@Nullable Grant grant) {
        leftSomethingBehind |= writerWaitingMillis > 0 || joinedQueue;
        if (grant == null) {
            lastTry = QueueTry.NONE;
        }
    }

    /**
     * Takes back what the tries left (after the last one's reply, see {@link WaitContext#withdrawAfter}); null when
     * they left nothing.
     */
    @Nullable CompletableFuture<Void> withdraw() {
        CompletableFuture<Grant> last = reply;
        return leftSomethingBehind && last != null ? context.withdrawAfter(last, keys, waiterId) : null;
    }
}
