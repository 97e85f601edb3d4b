package dev.leasehold.engine.holding;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.TakeOverStep;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * Taking over a lock that a releasing holder of this JVM handed to a waiter ({@link KeyLine#release}): at once
 * when its fencing token came from the reserved block, otherwise after one round trip that reserves the next
 * block, checks that the owner token still holds the key, renews the lease and tells whether other instances
 * queue (which ends the turn).
 * <p>
 * Why a hand-off is as safe as a release and a new acquire: Redis still holds the key for this JVM under one
 * owner token, and inside the JVM the turn passes from one thread to the next (the previous holder is done before
 * the next is given the lock), as it would through Redis. Every hand-off is a new acquisition with its own fencing
 * token, from a block the grant reserved in the key's counter (the counter then stands at the block's end, so the
 * next grant to any client is above every token of the block); a Redis restart that loses the counter cannot make
 * tokens go back, since blocks are a few tokens wide and the counter's rule keeps tokens above the server clock in
 * µs. A lock is handed off only while its lease estimate holds, and the successor inherits that estimate.
 */
final class HandOffs {

    private final LockServer server;

    private final LockEndings endings;

    HandOffs(LockServer server, LockEndings endings) {
        this.server = server;
        this.endings = endings;
    }

    /**
     * Takes over a lock handed to a waiter; never blocks, never completes exceptionally. Completes with the lock
     * when it is ready, or null when the waiter must ask Redis itself (it keeps its turn). A lock that is not taken
     * over is given back in Redis (nobody of this JVM has its owner token any more), and the holders since Redis
     * last confirmed the lease are told if it turns out lost, whenever the answer comes: the waiter may stop first.
     * @param bounded waits for a reply at most the Redis timeout (or until the waiter stops)
     */
    CompletableFuture<@Nullable HeldLock> takeOver(KeyLine line, HeldLock successor,
            Function<CompletableFuture<?>, CompletableFuture<Void>> bounded) {
        if (successor.fencingToken() != 0) {
            return CompletableFuture.completedFuture(carryOut(line.takenOver(successor), null));
        }
        long sentAt = EngineClock.nanoTime();
        CompletableFuture<LockServer.FenceBlock> reply;
        try {
            reply = server.reserveFences(successor.keys, successor.token, successor.leaseMillis);
        }
        catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<LockServer.FenceBlock> reserved = reply;
        return bounded.apply(reserved).thenApply(ignored -> carryOut(
                reserved.isDone() && !reserved.isCompletedExceptionally()
                        ? line.reservationAnswered(successor, reserved.join(), sentAt)
                        : line.reservationTimedOut(successor), reserved));
    }

    /**
     * Carries out what the key decided: the lock taken over, or given back (at once, or once the reservation is
     * answered: that answer still decides whether the holders before held the key), or the holders before told.
     */
    private @Nullable HeldLock carryOut(TakeOverStep step, @Nullable CompletableFuture<LockServer.FenceBlock> reservation) {
        switch (step.kind()) {
            case READY -> {
                return step.successor();
            }
            case GIVE_BACK -> endings.giveBack(step.successor(), step.tell());
            case GIVE_BACK_AFTER_RESERVATION -> endings.giveBackAfter(
                    Objects.requireNonNull(reservation, "a reservation was sent"), step.successor(), step.tell());
            case KEY_GONE -> endings.reportChain(step.tell(), LockEndings.KEY_GONE_AT_RESERVATION);
        }
        return null;
    }
}
