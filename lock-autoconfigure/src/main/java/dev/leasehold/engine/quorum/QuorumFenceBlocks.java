package dev.leasehold.engine.quorum;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.quorum.Round.Reply;
import dev.leasehold.engine.support.CoarseTimeouts;
import dev.leasehold.engine.support.EngineClock;

/**
 * Fencing-token blocks for local hand-offs in quorum mode, with the counter rule of
 * {@link QuorumLockServer}: every node that still holds the token adds a block to its counter and
 * answers its new value; the block ends at {@code E}, the maximum over a majority, and {@code E} is made
 * known to a majority (counters raised) before the block is used. Any earlier token {@code P} is known to
 * a majority, which shares a node with this one; that node answered at least {@code P + block}, so the
 * block's first token {@code E - block + 1} is above {@code P}, and the next grant anywhere is above
 * {@code E}. The reservation also renews the lease on the nodes that answered.
 */
final class QuorumFenceBlocks {

    private final List<QuorumNode> nodes;

    private final int majority;

    private final long stepTimeoutNanos;

    private final CoarseTimeouts timeouts;

    QuorumFenceBlocks(List<QuorumNode> nodes, int majority, long stepTimeoutNanos, CoarseTimeouts timeouts) {
        this.timeouts = timeouts;
        this.nodes = nodes;
        this.majority = majority;
        this.stepTimeoutNanos = stepTimeoutNanos;
    }

    /** The next block, or null when a majority no longer holds the token (the lock is lost). */
    CompletableFuture<FenceBlock> reserve(LockKeys keys, String token, long leaseMillis) {
        long startedAt = EngineClock.nanoTime();
        Predicate<Reply<FenceBlock>> held = reply -> reply.ok() && reply.counted() && reply.answer() != null;
        Predicate<Reply<FenceBlock>> notHeld = reply -> reply.ok() && reply.counted() && reply.answer() == null;
        Round<FenceBlock> round = Round.send(timeouts, nodes, node -> node.server().reserveFences(keys, token, leaseMillis),
                stepTimeoutNanos, replies -> Replies.count(replies, held) >= majority
                        || Replies.count(replies, notHeld) > nodes.size() - majority);
        return round.outcome().thenCompose(replies -> {
            List<Reply<FenceBlock>> holding = replies.stream().filter(held).toList();
            if (holding.size() < majority) {
                if (Replies.count(replies, notHeld) > nodes.size() - majority) {
                    return CompletableFuture.completedFuture(null);
                }
                return CompletableFuture.failedFuture(new QuorumUnavailableException("Only " + holding.size() + " of "
                        + nodes.size() + " Redis servers confirmed '" + keys.logicalKey() + "' for a token reservation ("
                        + majority + " needed)"));
            }
            // the block of the node whose counter stands highest: above every token any majority granted before
            FenceBlock highest = holding.stream().map(Reply::value).max(java.util.Comparator.comparingLong(FenceBlock::last))
                .orElseThrow();
            long last = highest.last();
            FenceBlock block = new FenceBlock(highest.first(), last, false);
            raiseOthersLater(keys, round, holding, last);
            long known = holding.stream().filter(reply -> reply.answer().last() >= last).count();
            if (known >= majority) {
                return CompletableFuture.completedFuture(block);
            }
            List<QuorumNode> behind = holding.stream().filter(reply -> reply.answer().last() < last)
                .map(Reply::node).toList();
            long left = stepTimeoutNanos - (EngineClock.nanoTime() - startedAt);
            int needed = (int) (majority - known);
            Predicate<List<Reply<Long>>> enough = raised -> Replies.count(raised,
                    reply -> reply.ok() && reply.counted() && reply.answer() >= last) >= needed;
            return Round.send(timeouts, behind, node -> node.server().raiseFence(keys, last), left, enough).outcome()
                .thenCompose(raised -> enough.test(raised) ? CompletableFuture.completedFuture(block)
                        : CompletableFuture.failedFuture(new QuorumUnavailableException("Fencing tokens up to " + last
                                + " of '" + keys.logicalKey() + "' could not be stored on " + majority + " of "
                                + nodes.size() + " Redis servers in time")));
        });
    }

    /**
     * Every node outside the deciding majority that answers below {@code last} (late, refused, not holding)
     * gets its counter raised too, without waiting, as after a grant: the counters then keep agreeing and
     * the next grant needs no extra round trip. Raising never lowers a counter, so it is safe on any node.
     */
    private void raiseOthersLater(LockKeys keys, Round<FenceBlock> round, List<Reply<FenceBlock>> deciding, long last) {
        for (int i = 0; i < nodes.size(); i++) {
            QuorumNode node = nodes.get(i);
            if (deciding.stream().anyMatch(reply -> reply.node() == node)) {
                continue;
            }
            round.calls().get(i).whenComplete((block, error) -> {
                if (block == null || block.last() < last) {
                    node.server().raiseFence(keys, last);
                }
            });
        }
    }
}
