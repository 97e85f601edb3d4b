package dev.leasehold.actuator;

import java.util.List;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.HeldLockInfo;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNodeHealth;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/leasehold}: the distributed locks this instance holds now, with their fencing token,
 * how long they have been held and how much lease is left; in quorum mode also each node's health.
 */
@Endpoint(id = "leasehold")
public class LeaseholdEndpoint {

    private final DefaultLockEngine engine;

    private final LockEngineSettings settings;

    private final QuorumLockServer quorum;

    public LeaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings) {
        this(engine, settings, null);
    }

    /** @param quorum the quorum mode's server, or null when locking on one Redis deployment */
    public LeaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings, QuorumLockServer quorum) {
        this.engine = engine;
        this.settings = settings;
        this.quorum = quorum;
    }

    @ReadOperation
    public LocksDescriptor locks() {
        return new LocksDescriptor(engine.instanceId(), settings.keyPrefix(), settings.leaseTime().toMillis(),
                engine.heldLockDetails(), quorum != null ? new QuorumDescriptor(quorum.majority(), quorum.nodeHealth()) : null);
    }

    /** What the endpoint shows. */
    public record LocksDescriptor(String instanceId, String keyPrefix, long leaseTimeMillis, List<HeldLockInfo> held,
            QuorumDescriptor quorum) {
    }

    /** Quorum mode: how many nodes a lock needs, and each node's health. */
    public record QuorumDescriptor(int majority, List<QuorumNodeHealth> nodes) {
    }
}
