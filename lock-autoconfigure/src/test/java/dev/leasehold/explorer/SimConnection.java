package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.QueueTry;

/**
 * One engine's connection to the simulated Redis, as the engine sees it: the {@link LockServer} commands, each a step
 * sent on the {@link SimWire} it extends (the explorer runs, drops, answers or loses it there) and run on
 * {@link SimRedis}; a fair queue in liveness mode and token reservations, as the Lua path. A step about owner tokens'
 * leases (acquire, reserve, renew) says so as it is sent, for what Redis told the instance ({@link RedisSaid}).
 * Readers (READ mode) take, renew and release shared leases (acquire_shared, renew_shared, release_shared); a watchdog
 * tick renews readers one call each, beside the exclusive batch, as {@code RenewalBatches}. Thread-safe: engine threads call in, the explorer drains.
 */
class SimConnection extends SimWire implements LockServer {

    /** Owner tokens this connection ever acquired with (the leftovers check after close looks for them). */
    final Set<String> tokens = new HashSet<>();

    /**
     * When this instance last sent a write of its liveness key (virtual ns; Long.MIN_VALUE: never): a keep-alive, or
     * a try that joins the queue (a queued waiter's later look writes none). {@link QueueLivenessWatch} reads it.
     */
    volatile long livenessWriteSentAt = Long.MIN_VALUE;

    /** A liveness run's slow looks ({@link #slowLooks}): how late, and the lane the held replies come back from. */
    private long lookLatencyNanos;

    private VirtualScheduler heldReplies;

    private final java.util.concurrent.atomic.AtomicInteger repliesHeld = new java.util.concurrent.atomic.AtomicInteger();

    SimConnection(String name, SimRedis redis) {
        super(name, redis);
    }

    synchronized boolean ownsToken(String token) {
        return tokens.contains(token);
    }

    private String token(String token) {
        return redis.world.tokenName(token);
    }

    // ---- LockServer

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        boolean shared = mode == LockMode.READ;
        synchronized (this) {
            tokens.add(token);
        }
        about("acquire", List.of(keys.logicalKey()), List.of(token));
        if (queueTry == QueueTry.JOIN) {
            livenessWriteSentAt = redis.world.now();
        }
        CompletableFuture<Object> sent = send(name + " acquire " + keys.logicalKey() + (shared ? " READ " : " ")
                + token(token) + (queueTry.joins() ? " queue" : ""),
                acknowledged(() -> redis.acquire(keys, shared, token, leaseMillis, writerWaitingMillis, waiterId, queueTry)),
                queueTry.joins() ? keys.logicalKey() : null, false, null, shared ? "|R" : "|W");
        CompletableFuture<Grant> reply = acks() ? ReplicaAcks.grant(sent, () -> release(keys, mode, token))
                : confirmed(sent, "grant");
        return queueTry == QueueTry.QUEUED && lookLatencyNanos > 0 ? late(reply) : reply;
    }

    /** Whether the scripts that write leases wait for the replica ({@link ReplicaAcks}). */
    private boolean acks() {
        return redis.replica != null && redis.replica.acknowledged;
    }

    /** The script, followed by its WAIT in the same step when replicas must acknowledge. */
    private java.util.function.Supplier<Object> acknowledged(java.util.function.Supplier<Object> script) {
        return acks() ? ReplicaAcks.withWait(script, redis.replica) : script;
    }

    /** The reply as the engine sees it: with replica acknowledgement, failed when it was not acknowledged. */
    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> confirmed(CompletableFuture<Object> reply, String what) {
        // without: the step's own future, as before
        return acks() ? ReplicaAcks.confirmed(reply, what) : (CompletableFuture<T>) (CompletableFuture<?>) reply;
    }

    /**
     * A liveness run: the reply to a queued waiter's look reaches the engine {@code latencyNanos} after the explorer
     * answered it (as in QueueLivenessTest: a waiter awake for a slow look while its instance's heartbeat beats), from
     * a lane of its own, made here before the engine's so that it is not one of the engine's lanes.
     */
    void slowLooks(long latencyNanos) {
        lookLatencyNanos = latencyNanos;
        if (latencyNanos > 0) {
            heldReplies = new VirtualScheduler(redis.world, work -> new Thread(work, "held-replies-" + name));
        }
    }

    /** Whether a reply is held back on its way to the engine ({@link #slowLooks}). */
    boolean replyHeld() {
        return repliesHeld.get() > 0;
    }

    private <T> CompletableFuture<T> late(CompletableFuture<T> reply) {
        CompletableFuture<T> late = new CompletableFuture<>();
        repliesHeld.incrementAndGet();
        reply.whenComplete((value, error) -> heldReplies.schedule(() -> {
            repliesHeld.decrementAndGet();
            if (error != null) {
                late.completeExceptionally(error);
            }
            else {
                late.complete(value);
            }
        }, lookLatencyNanos, java.util.concurrent.TimeUnit.NANOSECONDS));
        return late;
    }

    @Override
    public boolean queuesWaiters() {
        return true;
    }

    @Override
    public boolean queueLiveness() {
        return true;
    }

    @Override
    public CompletableFuture<Grant> lookWhileQueued(LockKeys keys, String waiterId) {
        return send(name + " look " + keys.logicalKey(), () -> redis.look(keys, waiterId + "|W"));
    }

    @Override
    public CompletableFuture<Void> keepAlive(String livenessKey, long millis) {
        livenessWriteSentAt = redis.world.now();
        return send(name + " keep-alive", () -> {
            redis.keepAlive(livenessKey, millis);
            return null;
        });
    }

    @Override
    public boolean reservesFences() {
        return true;
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        about("reserve", List.of(keys.logicalKey()), List.of(token));
        return confirmed(send(name + " reserve " + keys.logicalKey() + " " + token(token),
                acknowledged(() -> redis.reserveFences(keys, token, leaseMillis))),
                "token reservation (which renews the lease)");
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        // a caller's extend is told its answer, if in time; the watchdog's renewals are read by the watchdog (ToldChecks)
        about(Thread.currentThread().getName().contains("leasehold-watchdog") ? "renew" : "extend",
                List.of(keys.logicalKey()), List.of(token));
        boolean shared = mode == LockMode.READ;
        return confirmed(send(name + " renew " + keys.logicalKey() + (shared ? " READ " : " ") + token(token),
                acknowledged(() -> redis.renew(keys, shared, token, leaseMillis))), "renewal");
    }

    /**
     * One step for the exclusive batch, as renew_exclusive_many.lua: one reply for all; readers one call each
     * (RenewalBatches: in the tick's order when at most one lease is exclusive, else the readers first).
     */
    @Override
    public List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
        long exclusive = renewals.stream().filter(renewal -> renewal.mode() != LockMode.READ).count();
        if (exclusive == renewals.size()) {
            return renewBatch(renewals);
        }
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        if (exclusive <= 1) {
            renewals.forEach(renewal -> answers.add(renew(renewal.keys(), renewal.mode(), renewal.token(),
                    renewal.leaseMillis())));
            return answers;
        }
        List<Renewal> writers = new ArrayList<>();
        List<Integer> writerIndexes = new ArrayList<>();
        for (int i = 0; i < renewals.size(); i++) {
            Renewal renewal = renewals.get(i);
            if (renewal.mode() == LockMode.READ) {
                answers.add(renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis()));
            }
            else {
                answers.add(null);
                writers.add(renewal);
                writerIndexes.add(i);
            }
        }
        List<CompletableFuture<Boolean>> batch = renewBatch(writers);
        for (int j = 0; j < batch.size(); j++) {
            answers.set(writerIndexes.get(j), batch.get(j));
        }
        return answers;
    }

    private List<CompletableFuture<Boolean>> renewBatch(List<Renewal> renewals) {
        List<Renewal> batch = List.copyOf(renewals);
        StringBuilder what = new StringBuilder(name + " renew-batch");
        batch.forEach(renewal -> what.append(' ').append(renewal.keys().logicalKey()).append(" ")
            .append(token(renewal.token())));
        about("renew", batch.stream().map(renewal -> renewal.keys().logicalKey()).toList(),
                batch.stream().map(Renewal::token).toList());
        CompletableFuture<List<Boolean>> reply = confirmed(send(what.toString(), acknowledged(() -> {
            List<Boolean> renewed = new ArrayList<>();
            batch.forEach(renewal -> renewed.add(redis.renew(renewal.keys(), false, renewal.token(),
                    renewal.leaseMillis())));
            return renewed;
        })), "renewal");
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            int index = i;
            answers.add(reply.thenApply(renewed -> renewed.get(index)));
        }
        return answers;
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return release(keys, mode, token, 0);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        boolean shared = mode == LockMode.READ;
        about("release", List.of(keys.logicalKey()), List.of(token));
        return send(name + " release " + keys.logicalKey() + (shared ? " READ " : " ") + token(token)
                + (keepMillis > 0 ? " keep " + keepMillis : ""), () -> redis.release(keys, shared, token, keepMillis),
                null, false, token);
    }

    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        slow.descheduleAtWithdraw(keys.logicalKey());
        return send(name + " withdraw " + keys.logicalKey(), () -> redis.withdraw(keys, waiterId), keys.logicalKey(), true,
                null);
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return send(name + " is-locked " + keys.logicalKey(), () -> redis.isLocked(keys));
    }

    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        return send(name + " inspect " + keys.logicalKey(), () -> {
            boolean held = redis.isLocked(keys);
            int readers = redis.liveReaders(keys).size();
            return new KeyState(keys.logicalKey(), held, !held ? null : readers > 0 ? LockMode.READ : LockMode.EXCLUSIVE,
                    readers, redis.leaseLeftMillis(keys), false, redis.counter(keys));
        });
    }

    @Override
    public void onRelease(Consumer<String> channelListener) {
        subscriptions.releaseListener = channelListener;
    }

    @Override
    public void onSubscriptionLost(Runnable listener) {
        this.lostListener = listener;
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        slow.opening();
        return subscriptionChange(channel, "subscribe");
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        slow.opening();
        return subscriptionChange(channel, "unsubscribe");
    }

    /** The engine's first call that may wait: the subscription connection begins to open. */
    @Override
    public void prepareSubscriptions() {
        slow.opening();
    }

    @Override
    public void close() {
    }
}
