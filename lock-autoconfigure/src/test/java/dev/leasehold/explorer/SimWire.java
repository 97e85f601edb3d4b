package dev.leasehold.explorer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockServerException;

/**
 * The wire of one engine's connection to the simulated Redis, as the explorer drives it ({@link SimConnection}, which
 * extends it, is the engine's side: one object, one monitor): every step is queued, in call order (one ordered
 * connection); the explorer decides when the server runs the next one (or drops it: it never arrived), and when (and
 * whether) its reply comes back (or is lost). Release messages and subscriptions go through a second queue (the
 * subscription connection), so they may overtake replies or fall behind them. It keeps what faults did that the
 * checks excuse (a withdraw or a release dropped, the last loss) and what Redis told the instance about its leases,
 * as delivered ({@link RedisSaid}). Thread-safe: engine threads call in, the explorer drains.
 */
abstract class SimWire {

    /** A step queued on the connection: what it does on the server, and who waits for its reply. */
    private static final class Step {

        final String what;

        final Supplier<Object> onServer;

        final CompletableFuture<Object> reply = new CompletableFuture<>();

        Object result;

        /** The key whose queue entry this step writes (an acquire that joins the queue, a withdraw), or null. */
        String queueKey;

        boolean withdraw;

        /** An acquire's queue entry: '|W' or '|R'. */
        String entry = "|W";

        /** The owner token a release gives back, or null. */
        String releasedToken;

        /** What Redis says of these owner tokens' leases (acquire, reserve, renew): kind, keys and tokens, or null. */
        String kind;

        List<String> keys = List.of();

        List<String> tokens = List.of();

        long sentAt;

        /** When it ran on the server (virtual ns). */
        long ranAt;

        Step(String what, Supplier<Object> onServer) {
            this.what = what + (Thread.currentThread().getName().startsWith("main") ? "" : " [from " + Thread.currentThread().getName() + "]");
            this.onServer = onServer;
        }
    }

    /** A release message, or a subscription change, on the subscription connection. */
    private record PubSub(String channel, String kind, CompletableFuture<Void> done) {
    }

    final String name;

    /** Until when (virtual ns) nothing goes through this connection (the explorer's cut-off); 0: never cut off. */
    volatile long pausedUntil;

    final SimRedis redis;

    private final ArrayDeque<Step> sent = new ArrayDeque<>();

    private final ArrayDeque<Step> answered = new ArrayDeque<>();

    private final ArrayDeque<PubSub> pubSub = new ArrayDeque<>();

    private final Set<String> subscribed = new LinkedHashSet<>();

    /** What this instance's dropped withdraws and releases left in Redis. */
    final DroppedWrites dropped = new DroppedWrites();

    /** What Redis told this instance about its leases, as delivered. */
    final RedisSaid said = new RedisSaid();

    /** The subscription connection's opening and callers descheduled at close (the seed's; {@link Slowness}). */
    final Slowness slow;

    /** When a fault last dropped a command or lost a reply of this connection (virtual ns; Long.MIN_VALUE: never). */
    volatile long lastLossAt = Long.MIN_VALUE;

    /** What the next step this thread sends says about which owner tokens' leases (set just before sending it). */
    private static final ThreadLocal<Step> ABOUT = new ThreadLocal<>();

    static void about(String kind, List<String> keys, List<String> tokens) {
        Step about = new Step("", null);
        about.kind = kind;
        about.keys = keys;
        about.tokens = tokens;
        ABOUT.set(about);
    }

    /** Set by the engine (through {@link SimConnection}): a release message, or a subscription confirmed. */
    volatile Consumer<String> releaseListener = channel -> {
    };

    /** Set by the engine (through {@link SimConnection}): the subscription connection dropped. */
    volatile Runnable lostListener = () -> {
    };

    SimWire(String name, SimRedis redis) {
        this.name = name;
        this.redis = redis;
        this.slow = new Slowness(name, redis.world);
    }

    // ---- the engine's side (through SimConnection)

    <T> CompletableFuture<T> send(String what, Supplier<Object> onServer) {
        return send(what, onServer, null, false, null);
    }

    /**
     * A command queued until the explorer runs it; {@code queueKey}, {@code withdraw}, {@code releasedToken}: what it
     * writes that a fault dropping it leaves behind (see {@link DroppedWrites}).
     */
    <T> CompletableFuture<T> send(String what, Supplier<Object> onServer, String queueKey, boolean withdraw,
            String releasedToken) {
        return send(what, onServer, queueKey, withdraw, releasedToken, "|W");
    }

    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> send(String what, Supplier<Object> onServer, String queueKey, boolean withdraw,
            String releasedToken, String entry) {
        Step step = new Step(what, onServer);
        step.entry = entry;
        step.queueKey = queueKey;
        step.withdraw = withdraw;
        step.releasedToken = releasedToken;
        step.sentAt = redis.world.now();
        Step about = ABOUT.get();
        if (about != null) {
            ABOUT.remove();
            step.kind = about.kind;
            step.keys = about.keys;
            step.tokens = about.tokens;
        }
        synchronized (this) {
            sent.add(step);
        }
        return (CompletableFuture<T>) step.reply;
    }

    /** A subscription change ("subscribe", "unsubscribe") queued on the subscription connection. */
    CompletableFuture<Void> subscriptionChange(String channel, String kind) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            pubSub.add(new PubSub(channel, kind, done));
        }
        return done;
    }

    // ---- the explorer's side

    synchronized boolean hasSent() {
        return !sent.isEmpty();
    }

    synchronized boolean hasAnswered() {
        return !answered.isEmpty();
    }

    synchronized boolean hasPubSub() {
        return !pubSub.isEmpty();
    }

    /** A message or subscription change may be delivered now (the subscription connection is open). */
    synchronized boolean pubSubReady() {
        return !pubSub.isEmpty() && slow.open();
    }

    /** A step that writes this instance's queue entry on {@code key} (a try that queues, a withdraw) is on its way. */
    synchronized boolean queueWriteOnItsWay(String key) {
        return java.util.stream.Stream.concat(sent.stream(), answered.stream()).anyMatch(step -> key.equals(step.queueKey));
    }

    /**
     * Whether a step waits behind a renewal: the Jedis path sends a batch renewal on its first key's stripe (its own
     * pooled connection), so a release sent after it may reach Redis first ({@link #runPastRenewal()}).
     */
    synchronized boolean renewalAhead() {
        return sent.size() > 1 && overtakable(sent.peek());
    }

    /**
     * An exclusive renewal, which the Jedis path may send on another key's stripe. A reader's goes alone on its readers
     * key's stripe, as its release does: nothing of its key overtakes it.
     */
    private boolean overtakable(Step step) {
        return step.what.startsWith(name + " renew") && !step.what.contains(" READ ");
    }

    /** The key of a token reservation sent and not yet answered to the engine, or null. */
    synchronized String reservationOnItsWay() {
        for (ArrayDeque<Step> steps : List.of(sent, answered)) {
            for (Step step : steps) {
                if ("reserve".equals(step.kind)) {
                    return step.keys.get(0);
                }
            }
        }
        return null;
    }

    synchronized boolean renewalFirst() {
        return !sent.isEmpty() && overtakable(sent.peek());
    }

    /** The server runs the first step sent after the renewals at the head of the connection, before them. */
    void runPastRenewal() {
        Step step = null;
        synchronized (this) {
            for (Step each : sent) {
                if (!overtakable(each)) {
                    step = each;
                    break;
                }
            }
            if (step == null) {
                return;
            }
            sent.remove(step);
        }
        redis.world.trace("overtakes a renewal:");
        run(step, false);
    }

    /** The server runs the next step sent; {@code drop}: it never arrived (the reply says no reply came). */
    void runNext(boolean drop) {
        Step step;
        synchronized (this) {
            step = sent.poll();
        }
        run(step, drop);
    }

    private void run(Step step, boolean drop) {
        if (step.queueKey != null) {
            dropped.queueWrite(step.queueKey, step.withdraw, step.entry, drop);
        }
        if (drop && step.releasedToken != null) {
            dropped.releaseDropped(step.releasedToken);
        }
        if (drop) {
            lastLossAt = redis.world.now();
            redis.world.trace("drop " + step.what);
            step.reply.completeExceptionally(noReply("dropped before it reached Redis: " + step.what));
            return;
        }
        try {
            step.ranAt = redis.world.now();
            step.result = step.onServer.get();
            if (step.kind != null && !step.tokens.isEmpty()) {
                said.ran(step.tokens.get(0), ReplicaAcks.value(step.result), step.ranAt);
            }
            if (redis.replica != null) {
                redis.replica.primaryRan(() -> writeLost(step));
            }
        }
        catch (RuntimeException ex) {
            step.result = ex;
            redis.failed(step.what + ": " + ex); // no script throws: the simulation's own mistake, which must not pass for a reply
        }
        synchronized (this) {
            answered.add(step);
        }
        redis.world.trace("run " + step.what + " -> " + describe(step.result));
    }

    /**
     * This step's write never took effect for good (a failover lost it, {@link SimReplica}, or a reset connection lost it
     * before it reached Redis): what it leaves is excused as if a fault dropped it.
     */
    private void writeLost(Step step) {
        if (step.queueKey != null && step.withdraw) {
            dropped.queueWrite(step.queueKey, true, step.entry, true);
        }
        if (step.releasedToken != null) {
            dropped.releaseDropped(step.releasedToken);
        }
    }

    /** The next reply comes back; {@code lose}: it is lost (the driver's timeout: no reply). */
    void answerNext(boolean lose) {
        Step step;
        synchronized (this) {
            step = answered.poll();
        }
        // traced before it completes: what the woken caller records comes after, in every replay
        if (lose) {
            lastLossAt = redis.world.now();
            redis.world.trace("lose reply of " + step.what);
            step.reply.completeExceptionally(noReply("reply lost: " + step.what));
            return;
        }
        redis.world.trace("answer " + step.what + " -> " + describe(step.result));
        delivered(step);
        if (step.result instanceof RuntimeException ex) {
            step.reply.completeExceptionally(ex);
        }
        else {
            step.reply.complete(step.result);
        }
    }

    /** What the engine is told by a reply delivered to it (before it completes: the engine may act on it at once). */
    private void delivered(Step step) {
        long now = redis.world.now();
        if (ReplicaAcks.unconfirmed(step.result)) {
            return; // with replica acknowledgement a write not acknowledged tells the engine only a failure
        }
        Object result = ReplicaAcks.value(step.result);
        if ("renew".equals(step.kind) && result instanceof List<?> renewed) {
            for (int i = 0; i < renewed.size(); i++) {
                said.renewalDelivered(step.keys.get(i), step.tokens.get(i), Boolean.TRUE.equals(renewed.get(i)), step.sentAt,
                        now);
            }
        }
        else if (("renew".equals(step.kind) || "extend".equals(step.kind)) && result instanceof Boolean renewed) {
            said.renewalDelivered(step.keys.get(0), step.tokens.get(0), renewed, step.sentAt, now);
            if ("extend".equals(step.kind) && !renewed) {
                said.lastRefusalWasAnExtend();
            }
        }
        else if ("reserve".equals(step.kind) && result == null) {
            said.reservationGone(step.keys.get(0), step.tokens.get(0), step.sentAt, now);
        }
        else if ("release".equals(step.kind) && Boolean.FALSE.equals(step.result)) {
            said.releaseRefused(step.keys.get(0), step.tokens.get(0), step.sentAt, now);
        }
        else if ("release".equals(step.kind) && Boolean.TRUE.equals(step.result)) {
            said.releaseAccepted(step.keys.get(0), step.tokens.get(0), step.ranAt, now);
        }
    }

    /**
     * The next message or subscription change. A confirmation reaches the release listener (a release may have been
     * missed before it) and completes the subscribe, each may wake waiters: two steps (the other half next on this
     * connection), in the order {@code listenerFirst} says. In one step a woken waiter ran while this thread went on
     * in the engine (it read the channel's next release before or after the listener fired it: runs did not replay).
     */
    void pubSubNext(boolean listenerFirst) {
        PubSub next;
        synchronized (this) {
            next = pubSub.poll();
        }
        redis.world.trace(next.kind + " " + next.channel + (!next.kind.equals("subscribe") ? ""
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

    /** A PUBLISH on the server: queued for delivery if this connection is subscribed now. */
    synchronized void published(String channel) {
        if (subscribed.contains(channel)) {
            pubSub.add(new PubSub(channel, "message", null));
        }
    }

    /** Redis restarted: what was sent or answered gets no reply; the subscription drops and is made again. */
    void restarted() {
        List<Step> lost;
        List<String> channels;
        synchronized (this) {
            sent.forEach(this::writeLost); // they never reached Redis
            lost = new ArrayList<>(sent);
            lost.addAll(answered);
            sent.clear();
            answered.clear();
            pubSub.removeIf(entry -> entry.kind.equals("message") || entry.kind.equals("confirmed"));
            channels = new ArrayList<>(subscribed);
            subscribed.clear();
        }
        // one wake-up at a time: each reply's waiter (and then the listener's) runs before the next is woken
        for (Step step : lost) {
            step.reply.completeExceptionally(noReply("connection reset: " + step.what));
            redis.world.settle();
        }
        lostListener.run();
        redis.world.settle();
        for (String channel : channels) {
            synchronized (this) {
                pubSub.add(new PubSub(channel, "subscribe", new CompletableFuture<>()));
            }
        }
    }

    private static LockServerException noReply(String what) {
        return new LockServerException(LockServerException.Kind.NO_REPLY, "simulated: " + what, null);
    }

    private static String describe(Object result) {
        if (result instanceof ReplicaAcks.Acked acked) {
            return describe(acked.value()) + ", acknowledged by " + acked.acknowledgements();
        }
        if (result instanceof Grant grant) {
            return grant.granted() ? "granted " + grant.fencingToken() + ".." + grant.reservedThrough()
                    : "refused " + grant.blockedForMillis() + " ms";
        }
        if (result instanceof RuntimeException ex) {
            return ex.getClass().getSimpleName() + ": " + ex.getMessage();
        }
        return String.valueOf(result);
    }
}
