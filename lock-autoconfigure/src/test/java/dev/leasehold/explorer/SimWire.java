package dev.leasehold.explorer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.leasehold.engine.server.LockServerException;

/**
 * The wire of one engine's connection to the simulated Redis, as the explorer drives it ({@link SimConnection}, which
 * extends it, is the engine's side: one object, one monitor): every step is queued, in call order (one ordered
 * connection); the explorer decides when the server runs the next one (or drops it: it never arrived), and when (and
 * whether) its reply comes back (or is lost), each a {@link WireStep}. Release messages and subscriptions go through a second queue (the
 * subscription connection, {@link SubscriptionLine}), so they may overtake replies or fall behind them. It keeps what faults did that the
 * checks excuse (a withdraw or a release dropped, the last loss) and what Redis told the instance about its leases,
 * as delivered ({@link RedisSaid}). Thread-safe: engine threads call in, the explorer drains.
 */
abstract class SimWire {

    final String name;

    /** Until when (virtual ns) nothing goes through this connection (the explorer's cut-off); 0: never cut off. */
    volatile long pausedUntil;

    final SimRedis redis;

    private final ArrayDeque<WireStep> sent = new ArrayDeque<>();

    private final ArrayDeque<WireStep> answered = new ArrayDeque<>();

    /** The subscription connection: release messages and subscription changes. */
    final SubscriptionLine subscriptions = new SubscriptionLine();

    /** What this instance's dropped withdraws and releases left in Redis. */
    final DroppedWrites dropped = new DroppedWrites();

    /** What Redis told this instance about its leases, as delivered. */
    final RedisSaid said = new RedisSaid();

    /** The subscription connection's opening and callers descheduled at close (the seed's; {@link Slowness}). */
    final Slowness slow;

    /** When a fault last dropped a command or lost a reply of this connection (virtual ns; Long.MIN_VALUE: never). */
    volatile long lastLossAt = Long.MIN_VALUE;

    /** What the next step this thread sends says about which owner tokens' leases (set just before sending it). */
    private static final ThreadLocal<WireStep> ABOUT = new ThreadLocal<>();

    static void about(String kind, List<String> keys, List<String> tokens) {
        WireStep about = new WireStep("", null);
        about.kind = kind;
        about.keys = keys;
        about.tokens = tokens;
        ABOUT.set(about);
    }

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
        WireStep step = new WireStep(what, onServer);
        step.entry = entry;
        step.queueKey = queueKey;
        step.withdraw = withdraw;
        step.releasedToken = releasedToken;
        step.sentAt = redis.world.now();
        WireStep about = ABOUT.get();
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
        return subscriptions.change(channel, kind);
    }

    // ---- the explorer's side

    synchronized boolean hasSent() {
        return !sent.isEmpty();
    }

    synchronized boolean hasAnswered() {
        return !answered.isEmpty();
    }

    boolean hasPubSub() {
        return subscriptions.any();
    }

    /** A message or subscription change may be delivered now (the subscription connection is open). */
    boolean pubSubReady() {
        return subscriptions.any() && slow.open();
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
    private boolean overtakable(WireStep step) {
        return step.what.startsWith(name + " renew") && !step.what.contains(" READ ");
    }

    /** The key of a token reservation sent and not yet answered to the engine, or null. */
    synchronized String reservationOnItsWay() {
        for (ArrayDeque<WireStep> steps : List.of(sent, answered)) {
            for (WireStep step : steps) {
                if ("reserve".equals(step.kind)) {
                    return step.keys.get(0);
                }
            }
        }
        return null;
    }

    /** Whether a step sent and not yet run is one {@code what} (its trace text) says. */
    synchronized boolean anySent(java.util.function.Predicate<String> what) {
        return sent.stream().anyMatch(step -> what.test(step.what));
    }

    synchronized boolean renewalFirst() {
        return !sent.isEmpty() && overtakable(sent.peek());
    }

    /** The server runs the first step sent after the renewals at the head of the connection, before them. */
    void runPastRenewal() {
        WireStep step = null;
        synchronized (this) {
            for (WireStep each : sent) {
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
        WireStep step;
        synchronized (this) {
            step = sent.poll();
        }
        run(step, drop);
    }

    private void run(WireStep step, boolean drop) {
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
        redis.world.trace("run " + step.what + " -> " + WireStep.describe(step.result));
    }

    /**
     * This step's write never took effect for good (a failover lost it, {@link SimReplica}, or a reset connection lost it
     * before it reached Redis): what it leaves is excused as if a fault dropped it.
     */
    private void writeLost(WireStep step) {
        if (step.queueKey != null && step.withdraw) {
            dropped.queueWrite(step.queueKey, true, step.entry, true);
        }
        if (step.releasedToken != null) {
            dropped.releaseDropped(step.releasedToken);
        }
    }

    /** The next reply comes back; {@code lose}: it is lost (the driver's timeout: no reply). */
    void answerNext(boolean lose) {
        WireStep step;
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
        redis.world.trace("answer " + step.what + " -> " + WireStep.describe(step.result));
        step.delivered(said, redis.world.now());
        if (step.result instanceof RuntimeException ex) {
            step.reply.completeExceptionally(ex);
        }
        else {
            step.reply.complete(step.result);
        }
    }

    /** The next message or subscription change ({@link SubscriptionLine#next}). */
    void pubSubNext(boolean listenerFirst) {
        subscriptions.next(listenerFirst, redis.world);
    }

    /** A PUBLISH on the server: queued for delivery if this connection is subscribed now. */
    void published(String channel) {
        subscriptions.published(channel);
    }

    /** Redis restarted: what was sent or answered gets no reply; the subscription drops and is made again. */
    void restarted() {
        List<WireStep> lost;
        List<String> channels;
        synchronized (this) {
            sent.forEach(this::writeLost); // they never reached Redis
            lost = new ArrayList<>(sent);
            lost.addAll(answered);
            sent.clear();
            answered.clear();
        }
        channels = subscriptions.dropped();
        // one wake-up at a time: each reply's waiter (and then the listener's) runs before the next is woken
        for (WireStep step : lost) {
            step.reply.completeExceptionally(noReply("connection reset: " + step.what));
            redis.world.settle();
        }
        lostListener.run();
        redis.world.settle();
        channels.forEach(subscriptions::resubscribe);
    }

    private static LockServerException noReply(String what) {
        return new LockServerException(LockServerException.Kind.NO_REPLY, "simulated: " + what, null);
    }
}
