package dev.leasehold.engine.server;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A lock server that can be one node of a quorum: fencing tokens on a counter (the quorum makes a token known to a
 * majority by raising the counters that are behind), and the server's identity (a restart that lost the node's keys
 * shows as a new {@code run_id}). The quorum reaches its nodes only through this, so a node may be any server kind,
 * a simulated one included.
 */
public interface QuorumNodeServer extends LockServer {

    /** Raises the key's fencing counter to at least {@code atLeast}; answers the counter after the call. */
    CompletableFuture<Long> raiseFence(LockKeys keys, long atLeast);

    /** The server's {@code run_id}: it changes when the server restarts. */
    CompletableFuture<String> runId();

    /** Uses this token block size (and queue timing); returns this. */
    QuorumNodeServer fairQueue(FairQueue queue);

    /**
     * The fencing counter expires this long after its last write instead of never (null or zero: never), and no token
     * is below this client's clock; returns this.
     */
    QuorumNodeServer fenceRetention(@Nullable Duration retention);
}
