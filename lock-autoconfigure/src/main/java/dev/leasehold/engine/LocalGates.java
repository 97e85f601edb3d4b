package dev.leasehold.engine;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import dev.leasehold.LockMode;

/**
 * Queues the acquisitions of this JVM that want the same key (blocking and asynchronous alike), first come first served, so only the head of
 * the queue talks to Redis. An exclusive holder keeps its key's turn until it releases, so local waiters
 * wait here without any Redis traffic; a reader passes the turn on once granted. A releasing exclusive
 * holder may hand the lock itself to the next waiter with its turn ({@link Gate#handOff}), without Redis.
 * Gates exist only while someone uses them.
 */
final class LocalGates {

    private final ConcurrentHashMap<String, Gate> gates = new ConcurrentHashMap<>();

    private volatile boolean closed;

    /** Joins the key's gate; every join must be matched by one {@link Gate#leave()}. */
    Gate join(String key) {
        return gates.compute(key, (k, existing) -> {
            Gate gate = existing != null ? existing : new Gate(k);
            gate.users++;
            return gate;
        });
    }

    int size() {
        return gates.size();
    }

    /** Threads queued behind the head of their key's queue, over all keys (diagnostics and tests). */
    int queued() {
        int queued = 0;
        for (Gate gate : gates.values()) {
            synchronized (gate) {
                queued += gate.waiting.size();
            }
        }
        return queued;
    }

    /** Gives every queued thread, and every later one, a turn at once (shutdown: each then gives up). */
    void openAll() {
        closed = true;
        gates.values().forEach(Gate::openAll);
    }

    /** What a waiter receives with its turn: nothing (it goes to Redis), or a lock handed to it. */
    record Turn(HeldLock handedOver) {

        static final Turn FREE = new Turn(null);
    }

    final class Gate {

        private final String key;

        /** Waiters in arrival order; guarded by this gate's monitor. */
        private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

        /** Whether someone has the turn now; guarded by this gate's monitor. */
        private boolean taken;

        /** Threads using the gate; changed only inside the map's compute. */
        private int users;

        private Gate(String key) {
            this.key = key;
        }

        /**
         * Queues for a turn at the head of the queue, without blocking: the waiter's {@link Waiter#turn()}
         * completes when the turn comes (at once when the gate is free). A waiter that stops waiting before
         * then calls {@link #giveUp}.
         * @param takeOverMode the mode in which this waiter takes an exclusive watchdog lock handed to it, or
         * null when it cannot take one (a reader, a fixed lease)
         * @param owner the thread the lock will belong to, or null for an acquisition bound to no thread
         */
        Waiter enter(LockMode takeOverMode, Thread owner) {
            synchronized (this) {
                if (closed || !taken) {
                    taken = true;
                    return Waiter.FIRST;
                }
                Waiter waiter = new Waiter(owner, takeOverMode);
                waiting.add(waiter);
                return waiter;
            }
        }

        /** A waiter leaving: null once it is out of the queue, or the turn that reached it first. */
        Turn giveUp(Waiter waiter) {
            if (waiter.turn.complete(null)) {
                synchronized (this) {
                    waiting.remove(waiter);
                }
                return null;
            }
            return waiter.turn.join();
        }

        /**
         * Hands an exclusive lock to the next waiter, if it can take one (the head of the queue only, so
         * the order stays first come first served) if it is {@code eligible}: {@code successor} makes the lock for
         * the waiter's thread. True when a waiter took it, with the turn; false when the caller still has the turn.
         */
        boolean handOff(Predicate<Waiter> eligible, BiFunction<Thread, LockMode, HeldLock> successor) {
            while (true) {
                Waiter next;
                synchronized (this) {
                    next = waiting.peek();
                    if (next == null || next.takeOverMode == null || !eligible.test(next)) {
                        return false;
                    }
                    waiting.poll();
                }
                HeldLock handed = successor.apply(next.thread, next.takeOverMode);
                if (next.turn.complete(new Turn(handed))) {
                    return true;
                }
                // that waiter gave up at this moment: this lock never existed for anyone; the next waiter, if any
                handed.state.set(HeldLock.State.RELEASED);
                handed.gatePassedOn();
            }
        }

        /** Passes the turn to the next waiter, or frees it. Any thread may call it (a lock may be closed elsewhere). */
        void exit() {
            while (true) {
                Waiter next;
                synchronized (this) {
                    next = waiting.poll();
                    if (next == null) {
                        taken = false;
                        return;
                    }
                }
                if (next.turn.complete(Turn.FREE)) {
                    return;
                }
            }
        }

        private void openAll() {
            while (true) {
                Waiter next;
                synchronized (this) {
                    next = waiting.poll();
                    if (next == null) {
                        return;
                    }
                }
                next.turn.complete(Turn.FREE);
            }
        }

        void leave() {
            gates.computeIfPresent(key, (k, gate) -> {
                if (gate == this && --gate.users == 0) {
                    return null;
                }
                return gate;
            });
        }
    }

    /**
     * A queued acquisition (its thread, or null when it is bound to none); its turn completes with the turn,
     * or with null when it gave up first. Never completes exceptionally.
     */
    record Waiter(Thread thread, LockMode takeOverMode, CompletableFuture<Turn> turn, long enteredAtNanos) {

        /** The turn of a waiter that found the gate free. */
        static final Waiter FIRST = new Waiter(null, null, CompletableFuture.completedFuture(Turn.FREE), 0);

        Waiter(Thread thread, LockMode takeOverMode) {
            this(thread, takeOverMode, new CompletableFuture<>(), System.nanoTime());
        }
    }
}
