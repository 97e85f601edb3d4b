package dev.leasehold.engine;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.holding.Holdings;

import org.jspecify.annotations.Nullable;

/**
 * The locks that {@code @DistributedLock} holds for the calls running on this thread, one frame per call
 * (a multi-key call holds several); read through {@link dev.leasehold.LockContext}. Internal: only the
 * aspect pushes and pops.
 */
public final class CurrentLocks {

    // kept when empty: a locked call is often followed by another on the same thread
    private static final ThreadLocal<Deque<List<LockHandle>>> FRAMES = ThreadLocal.withInitial(ArrayDeque::new);

    private CurrentLocks() {
    }

    /** The last lock the innermost call took. */
    public static Optional<LockHandle> innermost() {
        List<LockHandle> frame = innermostFrame();
        return frame.isEmpty() ? Optional.empty() : Optional.of(frame.get(frame.size() - 1));
    }

    /** Every lock the innermost call took, in the order it took them; empty outside a locked call. */
    public static List<LockHandle> innermostFrame() {
        List<LockHandle> frame = FRAMES.get().peek();
        return frame != null ? frame : List.of();
    }

    /**
     * Whether the calling thread holds the key: through a {@code @DistributedLock} call running on it (the
     * innermost or an outer one), or a lock it took itself (bound to it: not taken asynchronously, not
     * detached) and has not closed or lost. Null asks for any key.
     */
    public static boolean holds(@Nullable String key) {
        for (List<LockHandle> frame : FRAMES.get()) {
            for (LockHandle handle : frame) {
                if ((key == null || key.equals(handle.key())) && handle.isHeld()) {
                    return true;
                }
            }
        }
        return Holdings.currentThreadHolds(key);
    }

    public static void push(List<LockHandle> handles) {
        FRAMES.get().push(handles);
    }

    public static void pop() {
        FRAMES.get().poll();
    }
}
