package dev.leasehold.explorer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QuorumNodeServer;

import org.jspecify.annotations.Nullable;

/**
 * One engine's connection to one node of a simulated quorum, as {@code LettuceLockServer.quorumNode} is to a real
 * one: the node's scripts count fencing tokens and broadcast every release (see {@link SimRedis#quorumNode}), it
 * neither queues waiters nor reserves a block with a grant (a reservation is asked for by the quorum), and it answers
 * {@code raiseFence} (raise_fence.lua) and {@code runId} (INFO server) as steps on its {@link SimWire}, which the
 * explorer runs, drops, delays or loses like any other.
 */
final class SimNodeConnection extends SimConnection implements QuorumNodeServer {

    /** The quorum client's clock in µs (one virtual clock for every client): the floor of a token with a retention. */
    private final java.util.function.LongSupplier clientMicros;

    /**
     * Until the run starts the node answers {@code runId} at once: the quorum server's constructor waits for its first
     * probes on the explorer's own thread, which alone moves the clock and runs the wire.
     */
    private volatile boolean started;

    SimNodeConnection(String name, SimRedis redis, java.util.function.LongSupplier clientMicros) {
        super(name, redis);
        this.clientMicros = clientMicros;
    }

    void started() {
        started = true;
    }

    @Override
    public boolean queuesWaiters() {
        return false;
    }

    @Override
    public boolean queueLiveness() {
        return false;
    }

    @Override
    public boolean reservesFences() {
        return false;
    }

    @Override
    public CompletableFuture<Long> raiseFence(LockKeys keys, long atLeast) {
        return send(name + " raise-fence " + keys.logicalKey() + " to " + atLeast, () -> redis.raiseFence(keys, atLeast));
    }

    @Override
    public CompletableFuture<String> runId() {
        if (!started) {
            return CompletableFuture.completedFuture(redis.runId());
        }
        return send(name + " run-id", redis::runId);
    }

    /** The token block is the run's fair queue setting, which the simulated node already has. */
    @Override
    public QuorumNodeServer fairQueue(FairQueue queue) {
        return this;
    }

    @Override
    public QuorumNodeServer fenceRetention(@Nullable Duration retention) {
        redis.quorumNode(retention == null ? 0 : retention.toMillis(), clientMicros);
        return this;
    }
}
