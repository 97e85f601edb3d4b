package dev.leasehold.engine.holding;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.leasehold.engine.key.HeldLock;

import org.jspecify.annotations.Nullable;

/**
 * The answers to the watchdog's renewals, settled on the watchdog's thread in one pass per burst of arrivals (not a
 * task per answer: with a million held locks a task per answer was an eighth of the client's CPU samples, JFR).
 * <p>
 * It keeps the count of renewals on their way (the watchdog sends a round in chunks and keeps at most a window of
 * them unanswered), and the chunks Redis did not answer within {@code leasehold.redis-timeout} (renewals failing)
 * until their answers come (renewals work again). Only the watchdog's thread touches the counts.
 */
final class RenewalAnswers {

    /** An answer to a renewal of {@code chunk}: {@code renewed} is null for an error. */
    record Answer(HeldLock lock, @Nullable Boolean renewed, Chunk chunk) {
    }

    /** Renewals sent together. */
    static final class Chunk {

        final long sentAtNanos;

        /** Answers not yet settled. */
        int awaited;

        /** Still counted on their way; no longer once overdue (their answers may never come). */
        boolean inWindow = true;

        Chunk(long sentAtNanos, int size) {
            this.sentAtNanos = sentAtNanos;
            this.awaited = size;
        }
    }

    private final ConcurrentLinkedQueue<Answer> arrived = new ConcurrentLinkedQueue<>();

    private final AtomicBoolean passScheduled = new AtomicBoolean();

    private final Executor watchdogThread;

    private final Runnable pass;

    /** Chunks Redis did not answer in time, with answers still awaited. */
    private final List<Chunk> overdue = new ArrayList<>();

    /** Renewals sent and not yet answered, but for overdue chunks. */
    private int onTheirWay;

    /**
     * @param watchdogThread runs a pass (rejects after shutdown: nothing is settled then)
     * @param pass settles what arrived, through {@link #drain}
     */
    RenewalAnswers(Executor watchdogThread, Runnable pass) {
        this.watchdogThread = watchdogThread;
        this.pass = pass;
    }

    /** A chunk of {@code size} renewals was sent at {@code sentAtNanos}. */
    Chunk sent(long sentAtNanos, int size) {
        onTheirWay += size;
        return new Chunk(sentAtNanos, size);
    }

    /** The renewal of {@code lock} in {@code chunk}: its answer is settled in a pass when it comes. */
    void await(HeldLock lock, CompletableFuture<Boolean> reply, Chunk chunk) {
        reply.whenComplete((renewed, error) -> {
            arrived.add(new Answer(lock, error == null ? renewed : null, chunk));
            if (passScheduled.compareAndSet(false, true)) {
                try {
                    watchdogThread.execute(pass);
                }
                catch (RejectedExecutionException ex) {
                    // the engine is shutting down: nothing left to settle
                }
            }
        });
    }

    /**
     * Hands every answer that arrived to {@code settle}, in order of arrival; an answer its lock still waited for
     * (not one it was sent again after) lets the next round send another.
     */
    void drain(Consumer<Answer> settle) {
        passScheduled.set(false); // an answer arriving from here on schedules another pass
        for (Answer answer; (answer = arrived.poll()) != null;) {
            Chunk chunk = answer.chunk();
            if (chunk.inWindow) {
                onTheirWay--;
            }
            if (--chunk.awaited == 0) {
                overdue.remove(chunk);
            }
            HeldLock lock = answer.lock();
            if (lock.renewalSentAtNanos() == chunk.sentAtNanos) {
                lock.renewalSentAtNanos(0);
            }
            settle.accept(answer);
        }
    }

    /**
     * At {@code leasehold.redis-timeout} after the chunk was sent: the number of its answers still missing. They no
     * longer count on their way (they may never come: a hanging connection), so the round goes on.
     */
    int overdue(Chunk chunk) {
        if (chunk.awaited == 0 || !chunk.inWindow) {
            return 0;
        }
        chunk.inWindow = false;
        onTheirWay -= chunk.awaited;
        overdue.add(chunk);
        return chunk.awaited;
    }

    /** Overdue chunks a tick old are forgotten: their locks still unanswered are sent again in this tick's round. */
    void forgetOlderThan(long nanos, long now) {
        overdue.removeIf(chunk -> now - chunk.sentAtNanos >= nanos);
    }

    boolean anyOverdue() {
        return !overdue.isEmpty();
    }

    int onTheirWay() {
        return onTheirWay;
    }
}
