package dev.leasehold.engine.holding;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.leasehold.engine.key.HeldLock;

/**
 * Renewal answers that come after their round stopped waiting for them (later than {@code leasehold.redis-timeout}):
 * they still settle their locks, on the watchdog's thread, all that arrived in one pass rather than one scheduled
 * task per answer (with a million held locks a task per late answer was an eighth of the client's CPU samples, JFR).
 * It also counts the answers still awaited, so the watchdog can tell when every late one is in.
 */
final class LateRenewals {

    /** A late answer: {@code renewed} is null for an error. */
    record Answer(HeldLock lock, Boolean renewed, long sentAtNanos) {
    }

    private final ConcurrentLinkedQueue<Answer> arrived = new ConcurrentLinkedQueue<>();

    private final AtomicInteger awaited = new AtomicInteger();

    private final AtomicBoolean passScheduled = new AtomicBoolean();

    private final Executor watchdogThread;

    private final Runnable pass;

    /**
     * @param watchdogThread runs a pass (rejects after shutdown: nothing is settled then)
     * @param pass settles what arrived, through {@link #drain}
     */
    LateRenewals(Executor watchdogThread, Runnable pass) {
        this.watchdogThread = watchdogThread;
        this.pass = pass;
    }

    /** The renewal of {@code lock} sent at {@code sentAtNanos} is still on its way: its answer is settled when it comes. */
    void await(HeldLock lock, CompletableFuture<Boolean> reply, long sentAtNanos) {
        awaited.incrementAndGet();
        reply.whenComplete((renewed, error) -> {
            arrived.add(new Answer(lock, error == null ? renewed : null, sentAtNanos));
            if (passScheduled.compareAndSet(false, true)) {
                try {
                    watchdogThread.execute(pass);
                }
                catch (java.util.concurrent.RejectedExecutionException ex) {
                    // the engine is shutting down: nothing left to settle
                }
            }
        });
    }

    /** On the watchdog's thread: hands every answer that arrived to {@code settle}, in order of arrival. */
    void drain(Consumer<Answer> settle) {
        passScheduled.set(false); // an answer arriving from here on schedules another pass
        for (Answer answer; (answer = arrived.poll()) != null;) {
            awaited.decrementAndGet();
            settle.accept(answer);
        }
    }

    /** Whether answers are still awaited (or arrived and not yet settled). */
    boolean anyAwaited() {
        return awaited.get() > 0;
    }
}
