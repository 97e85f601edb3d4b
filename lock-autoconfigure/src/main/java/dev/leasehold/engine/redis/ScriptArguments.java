package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.Objects;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;
import org.jspecify.annotations.Nullable;

/**
 * How {@link ScriptedLockServer}'s steps write the settings their scripts take as text: the lease, the fencing rule,
 * the fair queue's figures. Each argument costs Redis a Lua string and the client an argument object on every call,
 * so text that only changes with a setting is made once per setting, not once per call.
 */
final class ScriptArguments {

    /** Quorum mode: fencing tokens from a plain counter that never expires, not from the server clock. */
    private final boolean countingFence;

    /** A quorum node's counter retention in ms (0: the counter never expires); see {@link #fenceRetention}. */
    private volatile long fenceRetentionMillis;

    /** The lease of the last acquire as text: nearly every acquire has the same lease (no string per call). */
    private volatile NumberText lastLease = new NumberText(-1, "-1");

    private record NumberText(long value, String text) {
    }

    /** The fair queue's timing and the token block size ({@code leasehold.fair-queue.*}, {@code leasehold.hand-off.token-block}). */
    private volatile FairQueue queue = FairQueue.DEFAULTS;

    /** The queue's figures as the scripts take them, made once per setting rather than once per call. */
    private volatile QueueText queueText = new QueueText(FairQueue.DEFAULTS);

    /** {@link #queueSettings}, kept for the key prefix, queue figures and publish mode it was made for. */
    private record QueueSettings(String keyPrefix, QueueText queue, String publishMode, String text) {
    }

    private volatile @Nullable QueueSettings lastSettings;

    private record QueueText(String entryMillis, String claimMillis, String tokenBlock, String refreshMillis) {

        QueueText(FairQueue queue) {
            this(Long.toString(queue.entryMillis()), Long.toString(queue.claimMillis()),
                    Integer.toString(queue.tokenBlock()), Long.toString(queue.refreshMillis()));
        }
    }

    ScriptArguments(boolean countingFence) {
        this.countingFence = countingFence;
    }

    boolean countingFence() {
        return countingFence;
    }

    /** See {@link ScriptedLockServer#fenceRetention}. */
    void fenceRetention(@Nullable Duration retention) {
        if (!countingFence && retention != null && !retention.isZero()) {
            throw new IllegalStateException("a fencing counter retention is for quorum nodes only");
        }
        this.fenceRetentionMillis = retention == null ? 0 : retention.toMillis();
    }

    long fenceRetentionMillis() {
        return fenceRetentionMillis;
    }

    void fairQueue(FairQueue queue) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.queueText = new QueueText(queue);
    }

    int tokenBlock() {
        return queue.tokenBlock();
    }

    String tokenBlockText() {
        return queueText.tokenBlock();
    }

    String refreshMillisText() {
        return queueText.refreshMillis();
    }

    String claimMillisText() {
        return queueText.claimMillis();
    }

    String leaseText(long leaseMillis) {
        NumberText last = lastLease;
        if (last.value() != leaseMillis) {
            last = new NumberText(leaseMillis, Long.toString(leaseMillis));
            lastLease = last;
        }
        return last.text();
    }

    /** The fencing rule fence.lua takes: {@code clock} on one server, {@code count[:retention:client µs]} on a quorum node. */
    String fenceMode() {
        if (!countingFence) {
            return "clock";
        }
        long retention = fenceRetentionMillis;
        // the client's clock in µs is the floor of the node's next token (see fence.lua's fenceRule)
        return retention == 0 ? "count" : "count:" + retention + ":" + System.currentTimeMillis() * 1000;
    }

    /**
     * The queue's settings as the acquire, release, withdraw and token-reservation scripts take them, in one
     * argument (queue.lua's queueSettings): only the contended paths read these. Made once per key prefix and
     * setting, not once per call.
     * @param publishMode {@code "sharded"} where releases wake waiters with SPUBLISH, else empty
     * @param liveness whether the instance's liveness keys keep its queue entries (one server)
     */
    String queueSettings(LockKeys keys, String publishMode, boolean liveness) {
        QueueSettings last = lastSettings;
        String keyPrefix = keys.keyPrefix();
        if (last != null && keyPrefix != null && last.keyPrefix() == keyPrefix && last.queue() == queueText
                && last.publishMode().equals(publishMode)) {
            return last.text();
        }
        QueueText text = queueText;
        String settings = text.entryMillis() + " " + text.claimMillis() + " " + text.refreshMillis() + " "
                + (publishMode.equals("sharded") ? "sharded" : "plain") + " " + (liveness ? keys.instancePrefix() : "");
        if (keyPrefix != null) {
            lastSettings = new QueueSettings(keyPrefix, text, publishMode, settings);
        }
        return settings;
    }
}
