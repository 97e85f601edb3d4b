package dev.leasehold.explorer;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;

/** A critical section in progress: a handle a caller received, until the caller closes it. */
final class Section {

    final int id;

    final Client.Instance instance;

    final String key;

    /** What the caller asked (a re-entry: its holding's); READ is a shared section. */
    final LockMode mode;

    final LockHandle handle;

    final long token;

    final boolean reentry;

    final String op;

    final long callStart;

    final long grantedAt;

    final boolean heldBefore;

    /** Whether the fenced store accepted its read at the start. */
    final boolean readAccepted;

    /** Bound to a client's thread (a blocking tryLock), or to none (async). */
    final Client owner;

    /** Taken with a fixed lease (no watchdog): the only kind extend() is for. */
    boolean fixedLease;

    long holdNanos;

    /**
     * Where the engine counts a {@code holdAtLeast} from: its lock's acquisition, this grant for a lock of its own; for a
     * re-entry, the holding's (set by {@link Operations}).
     */
    long holdFrom;

    boolean closing;

    Section(int id, Client.Instance instance, String key, LockMode mode, LockHandle handle, boolean reentry, String op, long callStart,
            long grantedAt, boolean heldBefore, boolean readAccepted, Client owner) {
        this.id = id;
        this.instance = instance;
        this.key = key;
        this.mode = mode;
        this.handle = handle;
        this.token = handle.fencingToken();
        this.reentry = reentry;
        this.op = op;
        this.callStart = callStart;
        this.grantedAt = grantedAt;
        this.heldBefore = heldBefore;
        this.readAccepted = readAccepted;
        this.owner = owner;
        this.holdFrom = grantedAt;
    }

    boolean shared() {
        return mode == LockMode.READ;
    }

    @Override
    public String toString() {
        return op + "#" + id + "[" + instance.name + " " + key + (shared() ? " READ" : "") + " token=" + token + "]";
    }
}
