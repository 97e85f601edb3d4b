package dev.leasehold.actuator;

import java.util.List;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.HeldLockInfo;
import dev.leasehold.engine.LockEngineSettings;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/leasehold}: the distributed locks this instance holds now, with their fencing token,
 * how long they have been held and how much lease is left.
 */
@Endpoint(id = "leasehold")
public class LeaseholdEndpoint {

    private final DefaultLockEngine engine;

    private final LockEngineSettings settings;

    public LeaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings) {
        this.engine = engine;
        this.settings = settings;
    }

    @ReadOperation
    public LocksDescriptor locks() {
        return new LocksDescriptor(engine.instanceId(), settings.keyPrefix(), settings.leaseTime().toMillis(),
                engine.heldLockDetails());
    }

    /** What the endpoint shows. */
    public record LocksDescriptor(String instanceId, String keyPrefix, long leaseTimeMillis, List<HeldLockInfo> held) {
    }
}
