package dev.leasehold.autoconfigure;

import dev.leasehold.engine.DefaultLockEngine;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the lock engine while Redis is still reachable at shutdown. The Redis connection factory is a
 * {@link SmartLifecycle} (phase 0) that closes its connections when the context stops, before any bean is
 * destroyed; the engine's own close (a destroy method) would come too late: the locks it still held, and
 * the releases other threads sent a moment earlier (a leader-election thread unlocking when stopped),
 * would then fail and keep their keys for a whole lease. This stops in a phase just above the
 * connection factory's, after the web server, schedulers and message listeners (higher phases) stopped.
 */
public class LeaseholdEngineLifecycle implements SmartLifecycle {

    /** Just above Spring Data Redis's connection factories (phase 0). */
    public static final int PHASE = 1;

    private final ObjectProvider<DefaultLockEngine> engine;

    private volatile boolean running;

    public LeaseholdEngineLifecycle(ObjectProvider<DefaultLockEngine> engine) {
        this.engine = engine;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        DefaultLockEngine current = engine.getIfAvailable();
        if (current != null) {
            current.close();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
