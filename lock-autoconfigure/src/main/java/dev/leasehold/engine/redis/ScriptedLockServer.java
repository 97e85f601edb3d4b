package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.engine.support.EngineClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The per-server steps on one Redis server (standalone, Sentinel master or Cluster): which script each step runs,
 * with which keys and arguments, what its reply means, and the replica-acknowledgement rule; written once for
 * every Redis client. A subclass carries the round trips ({@link #eval}, {@link #evalAcknowledged}) and the
 * release messages.
 */
public abstract class ScriptedLockServer implements LockServer {

    private static final Log logger = LogFactory.getLog(ScriptedLockServer.class);

    /** What a script answers: a list, or a number. */
    protected enum Reply {
        LIST, NUMBER
    }

    /** The reply of a script and how many replicas acknowledged it ({@code WAIT}). */
    protected record Acknowledged<T>(T value, long acknowledgements) {
    }

    private final int ackReplicas;

    private final Duration ackTimeout;

    /**
     * How long a release or withdrawal refused with {@code TRYAGAIN} is sent again: a Cluster slot in the middle of a
     * migration refuses every script whose keys are split between its two masters or partly missing on either, and
     * a lock's queue keys rarely exist, so every release of a lock of that slot was refused until the slot was
     * handed over (milliseconds for a slot of a few keys), and the key stayed taken for the rest of its lease.
     */
    static final long TRY_AGAIN_PATIENCE_MILLIS = 2_000;

    private static final long TRY_AGAIN_FIRST_DELAY_MILLIS = 5;

    private static final long TRY_AGAIN_MAX_DELAY_MILLIS = 200;

    /** How the scripts' settings are written as text (once per setting). */
    private final ScriptArguments arguments;

    private final AtomicBoolean publishRefusalLogged = new AtomicBoolean();

    /**
     * @param ackReplicas replicas that must acknowledge a grant or renewal before it counts; 0 for none
     * @param countingFence a quorum node's counter (see {@code fence.lua}); such a server neither queues waiters
     * nor is acknowledged by replicas
     */
    protected ScriptedLockServer(int ackReplicas, Duration ackTimeout, boolean countingFence) {
        this.ackReplicas = ackReplicas;
        this.ackTimeout = Objects.requireNonNull(ackTimeout, "ackTimeout");
        this.arguments = new ScriptArguments(countingFence);
    }

    /**
     * Quorum nodes only: the fencing counter expires this long after its last write instead of never, and no
     * token is below this client's clock (so a counter that expired restarts above every earlier token, as
     * long as the clients' clocks differ by less than the retention). Null or zero: never expires. Returns this.
     */
    public ScriptedLockServer fenceRetention(@Nullable Duration retention) {
        arguments.fenceRetention(retention);
        return this;
    }

    /** Uses this fair-queue timing and token block size instead of the defaults; returns this. */
    public ScriptedLockServer fairQueue(FairQueue queue) {
        arguments.fairQueue(queue);
        return this;
    }

    /** One script round trip, EVALSHA with EVAL on NOSCRIPT; fails with a {@link LockServerException}. */
    protected abstract <T> CompletableFuture<T> eval(LockScript script, Reply reply, List<String> keys, List<String> args);

    /**
     * The script, then {@code WAIT} for {@code replicas} replicas on the same connection (only asked when
     * replica acknowledgement is on); fails with a {@link LockServerException}.
     */
    protected abstract <T> CompletableFuture<Acknowledged<T>> evalAcknowledged(LockScript script, Reply reply,
            List<String> keys, List<String> args, int replicas, Duration timeout);

    /**
     * A write that must stay in order with this key's acknowledged writes (a release, a take-back): on the
     * connection those go on, when it is another one.
     */
    protected <T> CompletableFuture<T> evalInOrder(LockScript script, Reply reply, List<String> keys, List<String> args) {
        return eval(script, reply, keys, args);
    }

    /** {@code "sharded"} where releases wake waiters with SPUBLISH (a Redis 7+ Cluster), else empty (PUBLISH). */
    protected String publishMode() {
        return "";
    }

    protected final boolean acknowledged() {
        return ackReplicas > 0;
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        LockScript script = mode == LockMode.READ ? LockScript.ACQUIRE_SHARED : LockScript.ACQUIRE_EXCLUSIVE;
        List<String> scriptKeys = List.of(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(),
                keys.queueExpiry());
        // '0' a single try, '1' joins the queue when refused, '2' already queued (acquire_exclusive.lua's ARGV[5])
        String queueDigit = !queueTry.joins() || !queuesWaiters() ? "0" : queueTry == QueueTry.QUEUED ? "2" : "1";
        String thisTry = queueDigit + " " + writerWaitingMillis;
        List<String> args = List.of(token, arguments.leaseText(leaseMillis), arguments.fenceMode(),
                reservesFences() ? arguments.tokenBlockText() : "1", thisTry, waiterId, queueSettings(keys), keys.channel());
        if (!acknowledged()) {
            return this.<List<?>>eval(script, Reply.LIST, scriptKeys, args).thenApply(ScriptReplies::toGrant);
        }
        return this.<List<?>>evalAcknowledged(script, Reply.LIST, scriptKeys, args, ackReplicas, ackTimeout)
            .thenCompose(acked -> {
                Grant grant = ScriptReplies.toGrant(acked.value());
                if (!grant.granted() || acked.acknowledgements() >= ackReplicas) {
                    return CompletableFuture.completedFuture(grant);
                }
                // not on enough replicas: a failover could lose it, so it does not count; take it back first
                return release(keys, mode, token).handle((released, error) -> {
                    throw notAcknowledged("grant", acked.acknowledgements());
                });
            });
    }

    private String queueSettings(LockKeys keys) {
        return arguments.queueSettings(keys, publishMode(), queueLiveness());
    }

    /** One server (standalone or Sentinel): a script may read another instance's liveness key (not on a Cluster). */
    @Override
    public boolean queueLiveness() {
        return queuesWaiters() && !clustered();
    }

    @Override
    public CompletableFuture<Void> keepAlive(String livenessKey, long millis) {
        return this.<Long>eval(LockScript.KEEP_ALIVE, Reply.NUMBER, List.of(livenessKey), List.of(Long.toString(millis)))
            .thenApply(result -> null);
    }

    @Override
    public CompletableFuture<@Nullable Grant> lookWhileQueued(LockKeys keys, String waiterId) {
        if (!queueLiveness()) {
            return CompletableFuture.completedFuture(null);
        }
        return this.<Long>eval(LockScript.LOOK, Reply.NUMBER, List.of(keys.lock(), keys.queue()),
                List.of(waiterId + "|W", arguments.refreshMillisText(), arguments.claimMillisText()))
            .thenApply(sleepMillis -> sleepMillis < 0 ? null : Grant.refused(sleepMillis));
    }

    /** Quorum nodes (counting fence) keep the broadcast wake-up: the queue is per server, not per quorum. */
    @Override
    public boolean queuesWaiters() {
        return !arguments.countingFence();
    }

    @Override
    public boolean reservesFences() {
        return !arguments.countingFence();
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        // a quorum node (counting fence) reserves too: QuorumLockServer takes the block from a majority
        List<String> scriptKeys = List.of(keys.lock(), keys.fence(), keys.queue());
        List<String> args = List.of(token, Long.toString(leaseMillis), Integer.toString(arguments.tokenBlock()), arguments.fenceMode());
        if (!acknowledged()) {
            return this.<List<?>>eval(LockScript.RESERVE_FENCES, Reply.LIST, scriptKeys, args)
                .thenApply(ScriptReplies::toFenceBlock);
        }
        // it renews the lease, so it counts only once acknowledged, like a renewal: a block that was not is no
        // confirmation of the lease (the hand-off then gives the key back and goes through Redis)
        return this.<List<?>>evalAcknowledged(LockScript.RESERVE_FENCES, Reply.LIST, scriptKeys, args, ackReplicas,
                ackTimeout).thenApply(acked -> {
                    FenceBlock block = ScriptReplies.toFenceBlock(acked.value());
                    if (block != null && acked.acknowledgements() < ackReplicas) {
                        throw notAcknowledged("token reservation (which renews the lease)", acked.acknowledgements());
                    }
                    return block;
                });
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        boolean shared = mode == LockMode.READ;
        LockScript script = shared ? LockScript.RENEW_SHARED : LockScript.RENEW_EXCLUSIVE;
        List<String> scriptKeys = List.of(shared ? keys.readers() : keys.lock());
        List<String> args = List.of(token, Long.toString(leaseMillis));
        if (!acknowledged()) {
            return this.<Long>eval(script, Reply.NUMBER, scriptKeys, args).thenApply(result -> result == 1L);
        }
        return this.<Long>evalAcknowledged(script, Reply.NUMBER, scriptKeys, args, ackReplicas, ackTimeout)
            .thenApply(acked -> {
                if (acked.value() == 1L && acked.acknowledgements() < ackReplicas) {
                    // an unconfirmed renewal: the watchdog retries, and loses the lock if the lease ends first
                    throw notAcknowledged("renewal", acked.acknowledgements());
                }
                return acked.value() == 1L;
            });
    }

    /**
     * Exclusive renewals in batches of up to {@link RenewalBatches#BATCH} keys per script call (on a Cluster a call
     * per master the batch touches; per slot with replica acknowledgement).
     */
    @Override
    public List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
        return RenewalBatches.renewAll(
                renewal -> renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis()),
                this::renewBatch, acknowledged() ? null : this::renewOnNode, renewals, this::clustered, this::masters);
    }

    /** The keys of one batch call: the watchdog hands over as many at once (a subclass: per master on a Cluster). */
    @Override
    public int renewalsPerCall() {
        return RenewalBatches.BATCH;
    }

    /**
     * Which master the client believes serves each Cluster slot (a small number per master), so that a batch of
     * renewals holds one master's locks; null where the client does not tell (a batch then takes a round per master).
     */
    protected @Nullable IntUnaryOperator masters() {
        return null;
    }

    /** One call of {@code renew_exclusive_node.lua} on the Cluster node that serves {@code firstKey}. */
    private CompletableFuture<List<?>> renewOnNode(String firstKey, List<String> args) {
        return this.<List<?>>eval(LockScript.RENEW_EXCLUSIVE_NODE, Reply.LIST, List.of(firstKey), args);
    }

    /**
     * Whether the keys of one script call must share a Cluster slot. True unless the subclass knows it talks to
     * a single server (grouping by slot is correct anywhere, only with fewer keys per call).
     */
    protected boolean clustered() {
        return true;
    }

    /**
     * One call of {@code renew_exclusive_many.lua}: a 1 or 0 per key, in order. With replica acknowledgement a
     * batch counts only once acknowledged, like a single renewal: the keys it renewed fail (the watchdog retries).
     */
    CompletableFuture<List<?>> renewBatch(List<String> keys, List<String> args) {
        if (!acknowledged()) {
            return this.<List<?>>eval(LockScript.RENEW_EXCLUSIVE_MANY, Reply.LIST, keys, args);
        }
        return this.<List<?>>evalAcknowledged(LockScript.RENEW_EXCLUSIVE_MANY, Reply.LIST, keys, args, ackReplicas,
                ackTimeout).thenApply(acked -> {
                    boolean anyRenewed = acked.value().stream().anyMatch(each -> ((Number) each).longValue() == 1L);
                    if (anyRenewed && acked.acknowledgements() < ackReplicas) {
                        throw notAcknowledged("renewal", acked.acknowledgements());
                    }
                    return acked.value();
                });
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return release(keys, mode, token, 0);
    }

    /** With {@code keepMillis > 0} (a holdAtLeast not yet passed) the key stays taken that long instead. */
    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        boolean shared = mode == LockMode.READ;
        LockScript script = shared ? LockScript.RELEASE_SHARED : LockScript.RELEASE_EXCLUSIVE;
        List<String> scriptKeys = shared ? List.of(keys.readers(), keys.lock(), keys.queue(), keys.queueExpiry())
                : List.of(keys.lock(), keys.queue(), keys.queueExpiry(), keys.fence());
        String hold = keepMillis <= 0 ? (queuesWaiters() ? "0 queued" : "0 broadcast") : keepMillis + " " + wakeUp();
        List<String> args = List.of(token, hold, queueSettings(keys), keys.channel());
        return retryingTryAgain(() -> this.<Long>evalInOrder(script, Reply.NUMBER, scriptKeys, args)).thenApply(result -> {
            if (result == 2L && publishRefusalLogged.compareAndSet(false, true)) {
                logger.warn("Redis refused to PUBLISH on " + keys.channel() + " (the Redis user has no rights on that "
                        + "channel). Locks are released, but waiters in other JVMs wake only at their safety re-check. "
                        + "Grant the channels, e.g. ACL SETUSER <user> &" + ScriptReplies.channelPattern(keys)
                        + " (logged once)");
            }
            return result >= 1L;
        });
    }

    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        List<String> scriptKeys = List.of(keys.writerWaiting(), keys.lock(), keys.readers(), keys.queue(),
                keys.queueExpiry());
        List<String> args = List.of(waiterId, wakeUp(), queueSettings(keys), keys.channel());
        return retryingTryAgain(() -> this.<Long>eval(LockScript.WITHDRAW, Reply.NUMBER, scriptKeys, args))
            .thenApply(result -> result == 1L);
    }

    /**
     * A write whose refusal leaves something taken in Redis (a release, a withdrawal), sent again while Redis
     * answers {@code TRYAGAIN}, after 5 ms and twice as long each time (at most 200 ms), for up to
     * {@link #TRY_AGAIN_PATIENCE_MILLIS}; compare-then-act, so a late one cannot touch another owner's lock. A try
     * for the lock is not sent again here: its wait already tries again, within the caller's wait time.
     */
    private <T> CompletableFuture<T> retryingTryAgain(Supplier<CompletableFuture<T>> write) {
        // the usual release: one stage more, and the clock is read only once Redis said TRYAGAIN
        return send(write).exceptionallyCompose(error -> !LockServerException.isTryAgain(error)
                ? CompletableFuture.failedFuture(error)
                : sendAgainOnTryAgain(write, error,
                        EngineClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TRY_AGAIN_PATIENCE_MILLIS),
                        TRY_AGAIN_FIRST_DELAY_MILLIS));
    }

    private <T> CompletableFuture<T> sendAgainOnTryAgain(Supplier<CompletableFuture<T>> write, Throwable refusal,
            long giveUpAt, long delayMillis) {
        if (EngineClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) - giveUpAt > 0) {
            return CompletableFuture.failedFuture(refusal);
        }
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS))
            .thenCompose(ignored -> send(write))
            .exceptionallyCompose(error -> !LockServerException.isTryAgain(error) ? CompletableFuture.failedFuture(error)
                    : sendAgainOnTryAgain(write, error, giveUpAt, Math.min(delayMillis * 2, TRY_AGAIN_MAX_DELAY_MILLIS)));
    }

    private static <T> CompletableFuture<T> send(Supplier<CompletableFuture<T>> write) {
        try {
            return write.get();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return this.<Long>eval(LockScript.IS_LOCKED, Reply.NUMBER, List.of(keys.lock(), keys.readers()), List.of())
            .thenApply(result -> result == 1L);
    }

    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        return this.<List<?>>eval(LockScript.INSPECT, Reply.LIST,
                List.of(keys.lock(), keys.readers(), keys.writerWaiting(), keys.fence(), keys.queue(), keys.queueExpiry()),
                List.of())
            .thenApply(result -> ScriptReplies.toKeyState(keys.logicalKey(), result));
    }

    /** Raises the key's fencing counter to at least {@code atLeast}; answers the counter after the call (quorum). */
    public CompletableFuture<Long> raiseFence(LockKeys keys, long atLeast) {
        return eval(LockScript.RAISE_FENCE, Reply.NUMBER, List.of(keys.fence()),
                List.of(Long.toString(atLeast), Long.toString(arguments.fenceRetentionMillis()),
                        Long.toString(System.currentTimeMillis() * 1000)));
    }

    /**
     * How the release and withdraw scripts wake waiters: {@code queued} (the queue's head alone) or {@code broadcast}
     * (quorum nodes: everyone listening on the key's channel).
     */
    private String wakeUp() {
        return queuesWaiters() ? "queued" : "broadcast";
    }

    private LockServerException notAcknowledged(String what, long acknowledgements) {
        return new LockServerException(LockServerException.Kind.REFUSED, "the " + what + " was acknowledged by "
                + acknowledgements + " of the " + ackReplicas + " replicas that leasehold.replica-ack.replicas"
                + " asks for within leasehold.replica-ack.timeout (" + ackTimeout + ")", null);
    }
}
