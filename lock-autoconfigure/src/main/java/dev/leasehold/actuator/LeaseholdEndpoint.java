package dev.leasehold.actuator;

import java.util.List;

import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.HeldLockInfo;
import dev.leasehold.engine.KeyState;
import dev.leasehold.engine.LockEngineSettings;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/leasehold}: the distributed locks this instance holds now, with their fencing token,
 * how long they have been held and how much lease is left; {@code /actuator/leasehold/{key}}: one key as
 * Redis sees it.
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
    public record LocksDescriptor(String instanceId, String keyPrefix, long leaseTimeMillis, List<HeldLockInfo> held) {
    }
}
