package dev.leasehold.engine.redis;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;

import org.jspecify.annotations.Nullable;

/**
 * The scripts' recurring arguments as text, made once per setting rather than once per call: the lease of the last
 * acquire (nearly every acquire has the same), the fair queue's figures and token block, and the queue's settings in
 * one argument.
 */
final class ScriptTexts {

    private record NumberText(long value, String text) {
    }

    /** The fair queue's figures as the scripts take them. */
    record QueueText(String entryMillis, String claimMillis, String tokenBlock, String refreshMillis) {

        QueueText(FairQueue queue) {
            this(Long.toString(queue.entryMillis()), Long.toString(queue.claimMillis()),
                    Integer.toString(queue.tokenBlock()), Long.toString(queue.refreshMillis()));
        }
    }

    /** {@link #queueSettings}, kept for the key prefix, queue figures and publish mode it was made for. */
    private record QueueSettings(String keyPrefix, QueueText queue, String publishMode, String text) {
    }

    private volatile NumberText lastLease = new NumberText(-1, "-1");

    private volatile QueueText queue = new QueueText(FairQueue.DEFAULTS);

    private volatile @Nullable QueueSettings lastSettings;

    void queue(FairQueue settings) {
        this.queue = new QueueText(settings);
    }

    QueueText queue() {
        return queue;
    }

    String lease(long leaseMillis) {
        NumberText last = lastLease;
        if (last.value() != leaseMillis) {
            last = new NumberText(leaseMillis, Long.toString(leaseMillis));
            lastLease = last;
        }
        return last.text();
    }

    /**
     * The queue's settings as the acquire, release, withdraw and token-reservation scripts take them, in one
     * argument (queue.lua's queueSettings): each argument costs Redis a Lua string and the client an argument object
     * on every call, and only the contended paths read these. Made once per key prefix and setting.
     * @param publishMode {@code "sharded"} where releases wake waiters with SPUBLISH, else anything
     * @param live liveness mode: the liveness keys' prefix goes in (else empty: entries per try)
     */
    String queueSettings(LockKeys keys, String publishMode, boolean live) {
        QueueSettings last = lastSettings;
        QueueText text = queue;
        String keyPrefix = keys.keyPrefix();
        if (last != null && keyPrefix != null && last.keyPrefix() == keyPrefix && last.queue() == text
                && last.publishMode().equals(publishMode)) {
            return last.text();
        }
        String settings = text.entryMillis() + " " + text.claimMillis() + " " + text.refreshMillis() + " "
                + (publishMode.equals("sharded") ? "sharded" : "plain") + " " + (live ? keys.instancePrefix() : "");
        if (keyPrefix != null) {
            lastSettings = new QueueSettings(keyPrefix, text, publishMode, settings);
        }
        return settings;
    }
}
