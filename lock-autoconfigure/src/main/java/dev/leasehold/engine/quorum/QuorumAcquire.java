package dev.leasehold.engine.quorum;

import java.util.concurrent.CompletableFuture;

import dev.leasehold.engine.server.Grant;

/**
 * The reply of a quorum acquire, which remembers each node's own acquire: a take-back of an outcome the
 * caller did not learn follows each of them on its node, not the reply of the whole step.
 */
final class QuorumAcquire extends CompletableFuture<Grant> {

    final Round<Grant> round;

    private QuorumAcquire(Round<Grant> round) {
        this.round = round;
    }

    static QuorumAcquire of(Round<Grant> round, CompletableFuture<Grant> decided) {
        QuorumAcquire reply = new QuorumAcquire(round);
        decided.whenComplete((grant, error) -> {
            if (error != null) {
                reply.completeExceptionally(error);
            }
            else {
                reply.complete(grant);
            }
        });
        return reply;
    }
}
