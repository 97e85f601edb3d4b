package dev.leasehold.explorer;

/**
 * fence.lua on the simulated Redis, the clock rule of fencing tokens: a grant's first token is at least the server's
 * clock (µs) and above every token before it, its block ends at most a block ahead of the clock, and the counter key
 * is written only when tokens handed out run ahead of the clock (a block by about a lease; at a release, any), to
 * live as long as it is ahead of the clock plus its retention (lease, or a release's hold, + 60 s after its last
 * write). Runs only on the explorer's thread, as {@link SimRedis}.
 */
final class SimFences {

    private final SimStrings strings;

    private final int tokenBlock;

    /**
     * A quorum node's counting rule (fence.lua's countFence): -1 for the clock rule (one server), 0 for a counter that
     * never expires, else its retention in ms.
     */
    private volatile long countingRetainMs = -1;

    /** The client's clock in µs, the floor of a counted token with a retention (the quorum node server's). */
    private java.util.function.LongSupplier clientMicros = () -> 0;

    SimFences(SimStrings strings, int tokenBlock) {
        this.strings = strings;
        this.tokenBlock = tokenBlock;
    }

    /** A quorum node: tokens counted on the counter ({@code retainMs} 0: it never expires), no clock. */
    void counting(long retainMs, java.util.function.LongSupplier clientMicros) {
        this.countingRetainMs = retainMs;
        this.clientMicros = clientMicros;
    }

    boolean counting() {
        return countingRetainMs >= 0;
    }

    /** raise_fence.lua: the counter raised to at least {@code target}, never lowered; the counter after the call. */
    long raise(String fenceKey, long target) {
        long current = counter(fenceKey);
        long retainMs = Math.max(0, countingRetainMs);
        long client = clientMicros.getAsLong();
        if (current < target) {
            if (retainMs > 0) {
                strings.set(fenceKey, Long.toString(target), retainMs + Math.max(0, Math.floorDiv(target - client + 999, 1000)));
            }
            else {
                strings.setPersistent(fenceKey, Long.toString(target));
            }
            return target;
        }
        if (retainMs > 0) {
            strings.pexpire(fenceKey, retainMs + Math.max(0, Math.floorDiv(current - client + 999, 1000)));
        }
        return current;
    }

    /** fence.lua's countFence: the counter moves on by a block (with a retention, never below the client's clock). */
    private long[] countFence(String fenceKey, int blockSize) {
        long retainMs = countingRetainMs;
        if (retainMs == 0) {
            long counted = counter(fenceKey) + blockSize; // INCRBY, then PERSIST
            strings.setPersistent(fenceKey, Long.toString(counted));
            return new long[] { counted - blockSize + 1, counted };
        }
        long floor = clientMicros.getAsLong();
        long first = Math.max(counter(fenceKey) + 1, floor);
        long last = first + blockSize - 1;
        counterWrite(fenceKey, last, floor, retainMs);
        return new long[] { first, last };
    }

    /** The counter key's value, 0 when absent. */
    long counter(String fenceKey) {
        String counter = strings.get(fenceKey);
        return counter == null ? 0 : Long.parseLong(counter);
    }

    /** The counter key lives as long as it is ahead of the clock, plus {@code retainMs}. */
    void counterWrite(String fenceKey, long last, long nowMicros, long retainMs) {
        long aheadMs = Math.max(0, Math.floorDiv(last - nowMicros + 999, 1000));
        strings.set(fenceKey, Long.toString(last), retainMs + aheadMs);
    }

    /**
     * A block of tokens above {@code above} (and above the counter, unless the caller knows it absent): its first and
     * last token.
     */
    long[] grantFence(String fenceKey, long lease, long above, boolean counterAbsent) {
        return grantFence(fenceKey, lease, above, counterAbsent, tokenBlock, false);
    }

    /** {@code keepsCounter}: a reader's grant, which has no value of its own and always writes the counter key. */
    long[] grantFence(String fenceKey, long lease, long above, boolean counterAbsent, int blockSize,
            boolean keepsCounter) {
        if (counting()) {
            return countFence(fenceKey, blockSize);
        }
        long now = strings.micros();
        long fence = Math.max(now, above + 1);
        if (!counterAbsent) {
            fence = Math.max(fence, counter(fenceKey) + 1);
        }
        // the block ends at most a block ahead of the clock: tokens never outrun it
        long last = Math.max(fence, now + blockSize - 1);
        if (keepsCounter || last >= now + lease * 1000 - 1000) {
            counterWrite(fenceKey, last, now, lease + 60000);
        }
        return new long[] { fence, last };
    }
}
