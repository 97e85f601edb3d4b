package dev.leasehold.engine;

/** What tests outside this package may read of an engine's local state (the campaign's leftover check). */
public final class EngineDiagnostics {

    private EngineDiagnostics() {
    }

    /** Keys with local state (a gate, a turn, a hand-off) in this engine. */
    public static int localGates(DefaultLockEngine engine) {
        return engine.localGateCount();
    }

    /** Callers waiting in this engine's local queues (behind a holder in this JVM). */
    public static int locallyQueued(DefaultLockEngine engine) {
        return engine.locallyQueuedCount();
    }
}
