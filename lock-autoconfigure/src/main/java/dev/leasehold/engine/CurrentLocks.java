package dev.leasehold.engine;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

import dev.leasehold.LockHandle;

/**
 * The stack of locks that {@code @DistributedLock} holds for the calls running on this thread; read
 * through {@link dev.leasehold.LockContext}. Internal: only the aspect pushes and pops.
 */
public final class CurrentLocks {

    private static final ThreadLocal<Deque<LockHandle>> STACK = new ThreadLocal<>();

    private CurrentLocks() {
    }

    public static Optional<LockHandle> innermost() {
        Deque<LockHandle> stack = STACK.get();
        return (stack == null || stack.isEmpty()) ? Optional.empty() : Optional.of(stack.peek());
    }

    public static void push(LockHandle handle) {
        Deque<LockHandle> stack = STACK.get();
        if (stack == null) {
            stack = new ArrayDeque<>();
            STACK.set(stack);
        }
        stack.push(handle);
    }

    public static void pop() {
        Deque<LockHandle> stack = STACK.get();
        if (stack != null) {
            stack.poll();
            if (stack.isEmpty()) {
                STACK.remove();
            }
        }
    }
}
