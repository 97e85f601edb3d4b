package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.leasehold.LockMode;
import dev.leasehold.engine.quorum.Round.Reply;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import dev.leasehold.engine.support.StarterThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The quorum mode (the Redlock algorithm): every step runs on N independent Redis servers at once, and
 * counts when a majority of them ({@code N/2 + 1}) agrees. The engine above (queueing, re-entrancy,
 * waiting, the watchdog, READ/WRITE) is the same as on one server.
 * <ul>
 * <li><b>Acquire</b> goes to every node in parallel. It is granted when a majority of the counted nodes
 * granted it and time is left on the lease after the time the round trips took and the drift allowance
 * ({@code lease × clockDriftFactor + 2 ms}); the holder's validity ends there ({@link #validMillis}).
 * Otherwise it is released on every node at once, including nodes whose reply did not come. An error
 * reply counts as "not granted"; it never fails the whole step.</li>
 * <li><b>Renew</b> and <b>release</b> go to every node; a renewal counts when a majority confirmed it.</li>
 * <li><b>Wake-up</b>: one subscription per node; a release published on any node wakes the waiters, who
 * then try again (the try is the safety check).</li>
 * </ul>
 * <h2>Fencing tokens</h2>
 * Each node keeps, per key, a plain counter that never expires; an acquire that a node grants increments
 * it there and answers the new value. The token of a grant is {@code T = max} of the values of the
 * granting majority, and <em>before the handle is returned</em> {@code T} is known to a majority: either
 * a majority already answered exactly {@code T} (the usual case: the nodes' counters agree, no extra
 * round trip), or the counters of the granting nodes that answered less are raised to {@code T} (one
 * round trip) until a majority holds at least {@code T}. Any two majorities share a node, so the majority
 * of the next grant includes a node whose counter is already {@code >= T}; that node answers
 * {@code >= T + 1}, and the next token, a maximum, is {@code > T}. This holds whichever majority answers
 * and whatever the nodes' clocks say, as long as nodes keep their data. Taking one node's counter, or the
 * maximum without making it known to a majority, goes backwards: with five nodes, grants on {A,B,C},
 * {C,D,E} and {A,B,D} count 1, 2 and 2. The counter must therefore never expire (a counter that expired
 * on the one node two majorities share would restart from 1), and it is never derived from a node's
 * clock (node clocks may be hours apart). The validity check comes after the raise, so a holder that
 * paused past its lease before its token was known to a majority does not get the lock.
 */
public class QuorumLockServer implements LockServer {

    private static final Log logger = LogFactory.getLog(QuorumLockServer.class);

    private final List<QuorumNode> nodes;

    private final int majority;

    private final double clockDriftFactor;

    private final long stepTimeoutNanos;

    private final AtomicLong longestLeaseMillis;

    private final ScheduledExecutorService prober;

    private final StarterThreads proberThreads = new StarterThreads("leasehold-quorum-probe");

    private final QuorumGrants grants;

    /** Every node call's time limit, on one tick (a timer per call cost a wake-up of its thread each). */
    private final CoarseTimeouts timeouts = new CoarseTimeouts();

    private final List<AutoCloseable> closeAfterNodes = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Guarded by this. */
    private boolean closed;

    /**
     * @param nodes three or more independent servers
     * @param redisTimeout bound of every step (each round answers a little before it)
     * @param leaseTime the watchdog lease: the least a restarted node waits before it counts again
     * @param clockDriftFactor part of the lease assumed lost to clock drift between the nodes
     */
    public QuorumLockServer(List<QuorumNode> nodes, Duration redisTimeout, Duration leaseTime, double clockDriftFactor) {
        if (nodes.size() < 3) {
            throw new IllegalArgumentException("A quorum needs 3 or more independent Redis servers, got " + nodes.size());
        }
        if (clockDriftFactor < 0 || clockDriftFactor >= 0.5) {
            throw new IllegalArgumentException("clockDriftFactor must be at least 0 and below 0.5, was " + clockDriftFactor);
        }
        this.nodes = List.copyOf(nodes);
        this.majority = nodes.size() / 2 + 1;
        this.clockDriftFactor = clockDriftFactor;
        long timeout = redisTimeout.toNanos();
        // answer a little before the engine's own bound on the call, so it sees our verdict, not a timeout
        this.stepTimeoutNanos = timeout - Math.min(TimeUnit.MILLISECONDS.toNanos(100), timeout / 5);
        this.longestLeaseMillis = new AtomicLong(leaseTime.toMillis());
        this.grants = new QuorumGrants(this.nodes, majority, stepTimeoutNanos, timeouts, this::driftMillis);
        this.prober = EngineClock.scheduler(proberThreads);
        List<CompletableFuture<Void>> first = new ArrayList<>();
        for (QuorumNode node : this.nodes) {
            node.configure(longestLeaseMillis::get, redisTimeout, timeouts);
            first.add(node.probe());
        }
        try {
            EngineClock.get(CompletableFuture.allOf(first.toArray(CompletableFuture[]::new)),
                    redisTimeout.plusMillis(100).toNanos());
        }
        catch (Exception ex) {
            // nodes that did not answer yet do not count until a later probe reaches them
        }
        long probeEvery = Math.max(50, Math.min(1000, leaseTime.toMillis() / 3));
        prober.scheduleWithFixedDelay(() -> this.nodes.forEach(QuorumNode::probe), probeEvery, probeEvery,
                TimeUnit.MILLISECONDS);
        logger.info("Leasehold quorum mode on " + this.nodes.size() + " Redis servers " + names()
                + "; a lock needs " + majority + " of them");
    }

    /** Every node uses this token block size (the fair queue itself is not used in quorum mode); returns this. */
    public QuorumLockServer fairQueue(FairQueue queue) {
        nodes.forEach(node -> node.server().fairQueue(queue));
        return this;
    }

    /**
     * The fencing counters expire this long after their last write on each node, instead of never; tokens then
     * never fall below the client's clock. Null or zero: never (the default). See docs/quorum.md.
     */
    public QuorumLockServer fenceRetention(@Nullable Duration retention) {
        nodes.forEach(node -> node.server().fenceRetention(retention));
        return this;
    }

    /** Something to close after the nodes (e.g. client resources they share); returns this. */
    public QuorumLockServer closing(AutoCloseable resource) {
        closeAfterNodes.add(resource);
        return this;
    }

    public int majority() {
        return majority;
    }

    public List<QuorumNodeHealth> nodeHealth() {
        return nodes.stream().map(QuorumNode::health).toList();
    }

    @Override
    public long validMillis(long leaseMillis) {
        return Math.max(1, leaseMillis - driftMillis(leaseMillis));
    }

    private long driftMillis(long leaseMillis) {
        return (long) (leaseMillis * clockDriftFactor) + 2;
    }

    /**
     * A lease of {@code leaseMillis} is about to be granted or renewed: a node that restarts from now on waits at
     * least that long before it counts (called before the write is sent, so a restart seen meanwhile waits too).
     */
    private void usedLease(long leaseMillis) {
        if (leaseMillis > longestLeaseMillis.get()) { // the usual case writes nothing (a renewal per lock and tick)
            longestLeaseMillis.accumulateAndGet(leaseMillis, Math::max);
        }
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        usedLease(leaseMillis);
        return grants.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId);
    }

    /** Each node's take-back follows that node's own acquire ({@link #releaseEverywhere}). */
    @Override
    public void takeBack(CompletableFuture<Grant> acquire, LockKeys keys, LockMode mode, String token) {
        if (acquire instanceof QuorumAcquire own) {
            grants.releaseEverywhere(own.round, keys, mode, token);
        }
        else {
            LockServer.super.takeBack(acquire, keys, mode, token);
        }
    }

    /** Local hand-off works in quorum mode too: token blocks are reserved on a majority ({@link QuorumFenceBlocks}). */
    @Override
    public boolean reservesFences() {
        return true;
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        usedLease(leaseMillis); // a reservation renews the lease too
        return new QuorumFenceBlocks(nodes, majority, stepTimeoutNanos, timeouts).reserve(keys, token, leaseMillis);
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        // LockHandle#extend renews to any lease: a restarted node must wait for that one too (before it is sent)
        usedLease(leaseMillis);
        return vote(node -> node.server().renew(keys, mode, token, leaseMillis), true, "renew %s", keys);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return vote(node -> node.server().release(keys, mode, token), false, "release %s", keys);
    }

    /** A holdAtLeast release: every node keeps the key for the time left, like a single server does. */
    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        return vote(node -> node.server().release(keys, mode, token, keepMillis), false, "release %s", keys);
    }

    /** Best effort on every node: true when any node removed the writer's mark. */
    @Override
    public CompletableFuture<Boolean> withdraw(LockKeys keys, String waiterId) {
        return Round.send(timeouts, nodes, node -> node.server().withdraw(keys, waiterId), stepTimeoutNanos, replies -> false)
            .outcome()
            .thenApply(replies -> replies.stream().anyMatch(reply -> reply.ok() && reply.answer()));
    }

    @Override
    public CompletableFuture<Boolean> isLocked(LockKeys keys) {
        return vote(node -> node.server().isLocked(keys), false, "ask whether %s is locked", keys);
    }

    /**
     * A yes/no step on every node: true when a majority said yes, false when a majority said no; when
     * neither (too few answered), it fails.
     * @param countedOnly whether only counted nodes' yes counts (renewals: a restarted node proves nothing)
     * @param what what the step does, {@code %s} for the key, for the message of a failure (built only then)
     */
    private CompletableFuture<Boolean> vote(java.util.function.Function<QuorumNode, CompletableFuture<Boolean>> step,
            boolean countedOnly, String what, LockKeys keys) {
        return Round.send(timeouts, nodes, step, stepTimeoutNanos, countedOnly ? countedVoteDecided : voteDecided)
            .outcome()
            .thenCompose(replies -> {
                Boolean verdict = verdict(replies, countedOnly);
                if (verdict != null) {
                    return CompletableFuture.completedFuture(verdict);
                }
                return CompletableFuture.failedFuture(new QuorumUnavailableException("Could not "
                        + what.formatted("'" + keys.logicalKey() + "'") + " on " + majority + " of " + nodes.size() + " Redis servers: "
                        + Replies.describe(nodes, replies)));
            });
    }

    /** Whether a vote's outcome is known (made once each, not per step). */
    private final Predicate<List<Reply<Boolean>>> voteDecided = replies -> verdict(replies, false) != null;

    private final Predicate<List<Reply<Boolean>>> countedVoteDecided = replies -> verdict(replies, true) != null;

    /** True when a majority said yes, false when too many said no for a majority to be left, null when neither. */
    private @Nullable Boolean verdict(List<Reply<Boolean>> replies, boolean countedOnly) {
        int yes = 0;
        int no = 0;
        for (Reply<Boolean> reply : replies) {
            if (reply.ok() && (reply.counted() || !countedOnly)) {
                if (reply.answer()) {
                    yes++;
                }
                else {
                    no++;
                }
            }
        }
        return yes >= majority ? Boolean.TRUE : no > nodes.size() - majority ? Boolean.FALSE : null;
    }

    /**
     * The key as a majority sees it: held when a majority holds it, with the lease that a majority still
     * has, and the highest fencing counter of any node (the next grant is higher).
     */
    @Override
    public CompletableFuture<KeyState> inspect(LockKeys keys) {
        return Round.send(timeouts, nodes, node -> node.server().inspect(keys), stepTimeoutNanos, replies -> false)
            .outcome()
            .thenCompose(replies -> {
                List<KeyState> states = replies.stream().filter(Reply::ok).map(Reply::value).toList();
                if (states.size() < majority) {
                    return CompletableFuture.failedFuture(new QuorumUnavailableException("Only " + states.size()
                            + " of " + nodes.size() + " Redis servers answered about '" + keys.logicalKey() + "': "
                            + Replies.describe(nodes, replies)));
                }
                return CompletableFuture.completedFuture(MajorityView.of(keys.logicalKey(), states, majority));
            });
    }

    @Override
    public void onRelease(Consumer<String> channelListener) {
        nodes.forEach(node -> node.server().onRelease(channelListener));
    }

    /**
     * Any node's subscription connection dropping is reported: a release published only on the majority
     * that held the lock may then reach no subscribed node, so waiters must look again.
     */
    @Override
    public void onSubscriptionLost(Runnable listener) {
        nodes.forEach(node -> node.server().onSubscriptionLost(listener));
    }

    @Override
    public void prepareSubscriptions() {
        nodes.forEach(node -> node.server().prepareSubscriptions());
    }

    /** Confirmed once a majority subscribed: every release reaches a majority, so one of them tells us. */
    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        return Round.send(timeouts, nodes, node -> node.server().subscribe(channel), stepTimeoutNanos,
                replies -> Replies.count(replies, Reply::ok) >= majority
                        || replies.size() - Replies.count(replies, Reply::ok) > nodes.size() - majority)
            .outcome()
            .thenCompose(replies -> Replies.count(replies, Reply::ok) >= majority ? CompletableFuture.<Void>completedFuture(null)
                    : CompletableFuture.failedFuture(new QuorumUnavailableException("Could not subscribe to " + channel
                            + " on " + majority + " of " + nodes.size() + " Redis servers: " + Replies.describe(nodes, replies))));
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        return Round.send(timeouts, nodes, node -> node.server().unsubscribe(channel), stepTimeoutNanos, replies -> false)
            .outcome()
            .thenApply(replies -> null);
    }

    private String names() {
        return nodes.stream().map(QuorumNode::name).toList().toString();
    }

    /** Idempotent: the engine's lifecycle closes it, then its destroy method. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        proberThreads.stop(prober, Duration.ofSeconds(5), true);
        for (QuorumNode node : nodes) {
            try {
                node.close();
            }
            catch (RuntimeException ex) {
                logger.debug("Closing " + node + " failed", ex);
            }
        }
        timeouts.close();
        for (AutoCloseable resource : closeAfterNodes) {
            try {
                resource.close();
            }
            catch (Exception ex) {
                logger.debug("Closing " + resource + " failed", ex);
            }
        }
    }
}
