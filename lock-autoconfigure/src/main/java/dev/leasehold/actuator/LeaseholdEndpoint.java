package dev.leasehold.actuator;

import java.util.List;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.HeldLockInfo;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNodeHealth;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/leasehold}: the distributed locks this instance holds now, with their fencing token,
 * how long they have been held and how much lease is left, and in quorum mode each node's health;
 * {@code /actuator/leasehold/{key}}: one key as Redis sees it.
 */
@Endpoint(id = "leasehold")
public class LeaseholdEndpoint {

    private final DefaultLockEngine engine;

    private final LockEngineSettings settings;

    private final @Nullable QuorumLockServer quorum;

    public LeaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings) {
        this(engine, settings, null);
    }

    /** @param quorum the quorum mode's server, or null when locking on one Redis deployment */
    public LeaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings, @Nullable QuorumLockServer quorum) {
        this.engine = engine;
        this.settings = settings;
        this.quorum = quorum;
    }

    @ReadOperation
    public LocksDescriptor locks() {
        return new LocksDescriptor(engine.instanceId(), settings.keyPrefix(), settings.leaseTime().toMillis(),
                engine.heldLockDetails(), quorum != null ? new QuorumDescriptor(quorum.majority(), quorum.nodeHealth()) : null);
    }

    /**
     * {@code /actuator/leasehold/{key}}: what Redis says about one logical key (held or not, mode, readers,
     * lease left, fencing counter), whoever holds it; read-only, and it never shows an owner token. A key
     * with slashes may be given as more path segments.
     */
    @ReadOperation
    public KeyState key(@Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
        return engine.inspect(String.join("/", key));
    }

    /** What the endpoint shows. */
    public record LocksDescriptor(String instanceId, String keyPrefix, long leaseTimeMillis, List<HeldLockInfo> held,
            @Nullable QuorumDescriptor quorum) {
    }

    /** Quorum mode: how many nodes a lock needs, and each node's health. */
    public record QuorumDescriptor(int majority, List<QuorumNodeHealth> nodes) {
    }
}
