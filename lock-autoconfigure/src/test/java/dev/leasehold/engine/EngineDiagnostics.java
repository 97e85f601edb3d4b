package dev.leasehold.engine;

/** What tests outside this package may read of an engine's local state (the campaign's leftover check). */
public final class EngineDiagnostics {

    private EngineDiagnostics() {
    }

    /** Keys with local state (a gate, a turn, a hand-off) in this engine. */
    public static int localGates(DefaultLockEngine engine) {
        return engine.localGateCount();
    }
}
