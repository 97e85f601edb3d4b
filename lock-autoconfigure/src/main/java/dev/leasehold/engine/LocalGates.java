package dev.leasehold.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Queues the threads of this JVM that want the same key, first come first served, so only the head of
 * the queue talks to Redis. An exclusive holder keeps its key's gate until it releases, so local
 * waiters wait here without any Redis traffic; a reader passes the gate once granted.
 * Gates exist only while someone uses them.
 */
final class LocalGates {

    private final ConcurrentHashMap<String, Gate> gates = new ConcurrentHashMap<>();

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

    /** Lets every queued thread through (shutdown: each then sees the engine closing and gives up). */
    void openAll() {
        gates.values().forEach(gate -> gate.permit.release(Integer.MAX_VALUE / 2));
    }

    final class Gate {

        private final String key;

        private final Semaphore permit = new Semaphore(1, true);

        private int users;

        private Gate(String key) {
            this.key = key;
        }

        /** Waits to be at the head of the queue; false when the time ran out first. */
        boolean enter(long timeoutNanos) throws InterruptedException {
            return permit.tryAcquire(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
        }

        /** Lets the next local waiter try. Any thread may call it (a lock may be closed elsewhere). */
        void exit() {
            permit.release();
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
}
