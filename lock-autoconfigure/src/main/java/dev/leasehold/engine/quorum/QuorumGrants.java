package dev.leasehold.engine.quorum;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;
import java.util.function.Predicate;

import dev.leasehold.LockMode;
import dev.leasehold.engine.quorum.Round.Reply;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A quorum grant: an acquire on every node at once, counted when a majority granted it, its fencing token made
 * known to a majority, and what it may have granted taken back everywhere when it does not count.
 */
final class QuorumGrants {

    private static final Log logger = LogFactory.getLog(QuorumGrants.class);

    private final List<QuorumNode> nodes;

    private final int majority;

    private final long stepTimeoutNanos;

    private final CoarseTimeouts timeouts;

    private final LongUnaryOperator driftMillis;

    /** Made once, not per acquire. */
    private final Predicate<List<Reply<Grant>>> decided = this::decided;

    QuorumGrants(List<QuorumNode> nodes, int majority, long stepTimeoutNanos, CoarseTimeouts timeouts, LongUnaryOperator driftMillis) {
        this.timeouts = timeouts;
        this.nodes = nodes;
        this.majority = majority;
        this.stepTimeoutNanos = stepTimeoutNanos;
        this.driftMillis = driftMillis;
    }

    /** Acquire on every node in parallel, decided as the quorum server's class comment says. */
    QuorumAcquire acquire(LockKeys keys, LockMode mode, String token, long leaseMillis, long writerWaitingMillis,
            String waiterId) {
        long startedAt = EngineClock.nanoTime();
        Round<Grant> round = Round.send(timeouts, nodes,
                node -> node.server().acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId),
                stepTimeoutNanos, decided, QuorumGrants::countInMetrics);
        QuorumAcquire reply = new QuorumAcquire(round);
        // the usual outcome (granted, counters in agreement) completes the reply right where the round was decided:
        // no stage in between, no stream, no list of the granting replies
        round.outcome().whenComplete((replies, error) -> {
            CompletableFuture<Grant> grant;
            try {
                grant = decide(round, replies, keys, mode, token, leaseMillis, startedAt);
            }
            catch (RuntimeException ex) {
                grant = CompletableFuture.failedFuture(ex);
            }
            grant.whenComplete((granted, failure) -> {
                if (failure != null) {
                    reply.completeExceptionally(failure);
                }
                else {
                    reply.complete(granted);
                }
            });
        });
        return reply;
    }

    /** Whether the acquire's outcome is known: a majority granted, or too many did not for a majority to be left. */
    private boolean decided(List<Reply<Grant>> replies) {
        int granted = countGranted(replies);
        return granted >= majority || replies.size() - granted > nodes.size() - majority;
    }

    /** Each node's answer counts in its metrics when it comes, also after the round was decided without it. */
    private static void countInMetrics(Reply<Grant> reply) {
        Grant grant = reply.value();
        if (grant == null) {
            return; // an error: the round counts it as one
        }
        if (grant.granted()) {
            reply.node().granted();
        }
        else {
            reply.node().refused();
        }
    }

    private CompletableFuture<Grant> decide(Round<Grant> round, List<Reply<Grant>> replies, LockKeys keys,
            LockMode mode, String token, long leaseMillis, long startedAt) {
        int granted = countGranted(replies);
        if (granted < majority) {
            releaseEverywhere(round, keys, mode, token);
            return notGranted(replies, granted);
        }
        long fence = highestGranted(replies);
        raiseLateGrants(keys, round, replies, fence);
        int known = 0;
        for (Reply<Grant> reply : replies) {
            if (grantedHere(reply) && reply.answer().fencingToken() == fence) {
                known++;
            }
        }
        if (known >= majority) {
            // the counters agree: the majority that granted already stores the token
            return valid(round, keys, mode, token, leaseMillis, startedAt, fence);
        }
        List<Reply<Grant>> grantedReplies = replies.stream().filter(QuorumGrants::grantedHere).toList();
        return makeKnown(keys, grantedReplies, fence, known, startedAt).thenCompose(ok -> {
            if (!ok) {
                releaseEverywhere(round, keys, mode, token);
                return CompletableFuture.failedFuture(new QuorumUnavailableException("Fencing token " + fence
                        + " of '" + keys.logicalKey() + "' could not be stored on " + majority + " of "
                        + nodes.size() + " Redis servers in time"));
            }
            return valid(round, keys, mode, token, leaseMillis, startedAt, fence);
        });
    }

    private static boolean grantedHere(Reply<Grant> reply) {
        return reply.ok() && reply.counted() && reply.answer().granted();
    }

    /** The token of the grant: the highest a counted node granted (the round has a majority of them). */
    private static long highestGranted(List<Reply<Grant>> replies) {
        long highest = Long.MIN_VALUE;
        for (Reply<Grant> reply : replies) {
            if (grantedHere(reply)) {
                highest = Math.max(highest, reply.answer().fencingToken());
            }
        }
        return highest;
    }

    private static int countGranted(List<Reply<Grant>> replies) {
        int granted = 0;
        for (Reply<Grant> reply : replies) {
            if (grantedHere(reply)) {
                granted++;
            }
        }
        return granted;
    }

    /** One round trip: raise the counters of the granting nodes that answered less than the token. */
    private CompletableFuture<Boolean> makeKnown(LockKeys keys, List<Reply<Grant>> granted, long fence, int known,
            long startedAt) {
        List<QuorumNode> behind = granted.stream()
            .filter(reply -> reply.answer().fencingToken() < fence)
            .map(Reply::node)
            .toList();
        long left = stepTimeoutNanos - (EngineClock.nanoTime() - startedAt);
        int needed = majority - known;
        Predicate<List<Reply<Long>>> enough = replies -> countRaised(replies, fence) >= needed;
        return Round.send(timeouts, behind, node -> node.server().raiseFence(keys, fence), left, enough)
            .outcome()
            .thenApply(enough::test);
    }

    private static long countRaised(List<Reply<Long>> replies, long fence) {
        return replies.stream().filter(reply -> reply.ok() && reply.counted() && reply.answer() >= fence).count();
    }

    /**
     * Every other node that answers without already holding the token (a late grant, a refusal, a grant
     * that does not count, a timeout) gets its counter raised too, without waiting: then the next grant usually
     * finds the counters in agreement and needs no extra round trip. Raising never lowers a counter,
     * so it is safe on any node.
     */
    private void raiseLateGrants(LockKeys keys, Round<Grant> round, List<Reply<Grant>> decided, long fence) {
        for (int i = 0; i < nodes.size(); i++) {
            QuorumNode node = nodes.get(i);
            if (!grantedBy(decided, node)) {
                // a call that timed out may still run on its node: the raise goes on the same connection
                // after it, so it lands after the late acquire and leaves that counter in agreement too
                round.calls().get(i).whenComplete((grant, error) -> {
                    if (grant == null || !grant.granted() || grant.fencingToken() < fence) {
                        node.server().raiseFence(keys, fence);
                    }
                });
            }
        }
    }

    private static boolean grantedBy(List<Reply<Grant>> replies, QuorumNode node) {
        for (Reply<Grant> reply : replies) {
            if (reply.node() == node && grantedHere(reply)) {
                return true;
            }
        }
        return false;
    }

    /** Granted only if time is left on the lease after the round trips and the drift allowance. */
    private CompletableFuture<Grant> valid(Round<Grant> round, LockKeys keys, LockMode mode, String token, long leaseMillis,
            long startedAt, long fence) {
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(EngineClock.nanoTime() - startedAt);
        if (leaseMillis - elapsedMillis - driftMillis.applyAsLong(leaseMillis) <= 0) {
            releaseEverywhere(round, keys, mode, token);
            return CompletableFuture.failedFuture(new QuorumUnavailableException("Lock '" + keys.logicalKey()
                    + "' was granted by a majority only after " + elapsedMillis + " ms, with nothing left of its "
                    + leaseMillis + " ms lease after the clock drift allowance"));
        }
        return CompletableFuture.completedFuture(Grant.granted(fence));
    }

    private CompletableFuture<Grant> notGranted(List<Reply<Grant>> replies, int granted) {
        long blockedFor = replies.stream()
            .filter(reply -> reply.ok() && reply.counted() && !reply.answer().granted())
            .mapToLong(reply -> reply.answer().blockedForMillis())
            .min()
            .orElse(-1);
        if (blockedFor > 0) {
            return CompletableFuture.completedFuture(Grant.refused(blockedFor));
        }
        return CompletableFuture.failedFuture(new QuorumUnavailableException("Only " + granted + " of "
                + nodes.size() + " Redis servers granted the lock (" + majority + " needed); " + Replies.describe(nodes, replies)));
    }

    /**
     * Takes an acquire back on every node, each once its acquire's reply came (or failed or timed out):
     * sent at once, a release can reach a node before the acquire it takes back (seen with MONITOR: the
     * release, then the acquire, on one connection). The likely path: the nodes share Lettuce's event
     * loops, the round is decided on one of them, and a write made on an event loop goes out at once,
     * ahead of the acquire that the calling thread queued on that loop. The late grant then blocks the
     * key there for a whole lease; with only a bare majority of the nodes alive that blocks everyone.
     * A node that refused for sure has nothing to take back.
     */
    void releaseEverywhere(Round<Grant> round, LockKeys keys, LockMode mode, String token) {
        for (int i = 0; i < nodes.size(); i++) {
            QuorumNode node = nodes.get(i);
            round.calls().get(i).whenComplete((grant, error) -> {
                if (grant != null && !grant.granted()) {
                    return;
                }
                try {
                    node.server().release(keys, mode, token);
                }
                catch (RuntimeException ex) {
                    logger.debug("Release on " + node + " failed", ex);
                }
            });
        }
    }
}
