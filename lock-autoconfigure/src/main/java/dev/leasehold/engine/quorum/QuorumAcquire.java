package dev.leasehold.engine.quorum;

import java.util.concurrent.CompletableFuture;

import dev.leasehold.engine.server.Grant;

/**
 * The reply of a quorum acquire, which remembers each node's own acquire: a take-back of an outcome the
 * caller did not learn follows each of them on its node, not the reply of the whole step.
 */
final class QuorumAcquire extends CompletableFuture<Grant> {

    final Round<Grant> round;

    QuorumAcquire(Round<Grant> round) {
        this.round = round;
    }
}
