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

    SimFences(SimStrings strings, int tokenBlock) {
        this.strings = strings;
        this.tokenBlock = tokenBlock;
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
