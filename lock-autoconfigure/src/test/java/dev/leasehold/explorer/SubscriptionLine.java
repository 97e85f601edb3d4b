package dev.leasehold.explorer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The subscription connection of a {@link SimWire}: release messages and subscription changes in their own queue, so
 * that they may overtake the command connection's replies or fall behind them, and the channels it is subscribed to.
 * Thread-safe: engine threads subscribe, the explorer delivers.
 */
final class SubscriptionLine {

    /** A release message, or a subscription change, on the subscription connection. */
    private record PubSub(String channel, String kind, CompletableFuture<Void> done) {
    }

    private final ArrayDeque<PubSub> pubSub = new ArrayDeque<>();

    private final Set<String> subscribed = new LinkedHashSet<>();

    /** Set by the engine (through {@link SimConnection}): a release message, or a subscription confirmed. */
    volatile Consumer<String> releaseListener = channel -> {
    };

    /** A subscription change ("subscribe", "unsubscribe") queued. */
    CompletableFuture<Void> change(String channel, String kind) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            pubSub.add(new PubSub(channel, kind, done));
        }
        return done;
    }

    synchronized boolean any() {
        return !pubSub.isEmpty();
    }

    /**
     * The next message or subscription change. A confirmation reaches the release listener (a release may have been
     * missed before it) and completes the subscribe, each may wake waiters: two steps (the other half next on this
     * connection), in the order {@code listenerFirst} says. In one step a woken waiter ran while this thread went on
     * in the engine (it read the channel's next release before or after the listener fired it: runs did not replay).
     */
    void next(boolean listenerFirst, SimWorld world) {
        PubSub next;
        synchronized (this) {
            next = pubSub.poll();
        }
        world.trace(next.kind + " " + next.channel + (!next.kind.equals("subscribe") ? ""
                : listenerFirst ? " (to its listener first)" : " (completes first)"));
        switch (next.kind) {
            case "subscribe" -> {
                synchronized (this) {
                    subscribed.add(next.channel);
                    // the other half, next on this connection
                    pubSub.addFirst(listenerFirst ? new PubSub(next.channel, "subscribed", next.done)
                            : new PubSub(next.channel, "confirmed", null));
                }
                if (listenerFirst) {
                    releaseListener.accept(next.channel);
                }
                else {
                    next.done.complete(null);
                }
            }
            case "subscribed" -> next.done.complete(null);
            case "unsubscribe" -> {
                synchronized (this) {
                    subscribed.remove(next.channel);
                }
                next.done.complete(null);
            }
            default -> releaseListener.accept(next.channel);
        }
    }

    /** A PUBLISH on the server: queued for delivery if subscribed to {@code channel} now. */
    synchronized void published(String channel) {
        if (subscribed.contains(channel)) {
            pubSub.add(new PubSub(channel, "message", null));
        }
    }

    /** The connection dropped (a restart): messages and confirmations on their way are gone; the channels it had. */
    synchronized List<String> dropped() {
        pubSub.removeIf(entry -> entry.kind.equals("message") || entry.kind.equals("confirmed"));
        List<String> channels = new ArrayList<>(subscribed);
        subscribed.clear();
        return channels;
    }

    /** The subscription made again after it dropped. */
    synchronized void resubscribe(String channel) {
        pubSub.add(new PubSub(channel, "subscribe", new CompletableFuture<>()));
    }
}
