package dev.leasehold.engine.key;

import java.util.ArrayDeque;

import org.jspecify.annotations.Nullable;

/**
 * Claiming from the queue of a {@link KeyLine} (first come first served; null until its first waiter, and once
 * closed), under that line's monitor. Whoever {@linkplain Waiter#claim() claims} a waiter completes its turn; one
 * that gave up at that moment is skipped.
 */
final class Waiters {

    private Waiters() {
    }

    static int size(@Nullable ArrayDeque<Waiter> queue) {
        return queue == null ? 0 : queue.size();
    }

    /** The next waiter, claimed; null when nobody waits. */
    static @Nullable Waiter claimNext(@Nullable ArrayDeque<Waiter> queue) {
        if (queue == null) {
            return null;
        }
        for (Waiter head = queue.poll(); head != null; head = queue.poll()) {
            if (head.claim()) {
                return head;
            }
        }
        return null;
    }

    /** The head, claimed, if it can take a handed lock and the turn of {@code state} admits it. */
    static @Nullable Waiter claimTakeOver(@Nullable ArrayDeque<Waiter> queue, LineState state, HandOffRules rules) {
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
}
