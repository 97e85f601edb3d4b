package dev.leasehold.engine.key;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.LockMode;

/**
 * The waiters queued on a {@link KeyLine}, first come first served; guarded by that line's monitor. Whoever
 * {@linkplain Waiter#claim() claims} a waiter completes its turn; one that gave up at that moment is skipped.
 */
final class Waiters {

    // made for the first waiter: a held lock keeps its line, and most have nobody waiting (56 bytes per lock)
    private ArrayDeque<Waiter> queue;

    Waiter add(LockMode takeOverMode, Thread owner) {
        Waiter waiter = new Waiter(owner, takeOverMode);
        if (queue == null) {
            queue = new ArrayDeque<>(2);
        }
        queue.add(waiter);
        return waiter;
    }

    void remove(Waiter waiter) {
        if (queue != null) {
            queue.remove(waiter);
        }
    }

    int size() {
        return queue == null ? 0 : queue.size();
    }

    /** The next waiter, claimed; null when nobody waits. */
    Waiter claimNext() {
        for (Waiter head = queue != null ? queue.poll() : null; head != null; head = queue.poll()) {
            if (head.claim()) {
                return head;
            }
        }
        return null;
    }

    /** The head, claimed, if it can take a handed lock and the turn of {@code state} admits it. */
    Waiter claimTakeOver(LineState state, HandOffRules rules) {
        if (queue == null) {
            return null;
        }
        for (Waiter next = queue.peek(); next != null && next.takeOverMode() != null
                && state.admits(rules, next.enteredAtNanos()); next = queue.peek()) {
            queue.poll();
            if (next.claim()) {
                return next;
            }
            // that waiter gave up at this moment: the next one, if any
        }
        return null;
    }

    /** Shutdown: every waiter queued now (they get the turn at once); later ones are not queued. */
    List<Waiter> close() {
        List<Waiter> all = queue == null ? List.of() : new ArrayList<>(queue);
        queue = null;
        return all;
    }
}
