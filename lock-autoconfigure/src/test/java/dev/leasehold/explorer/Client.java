package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.engine.DefaultLockEngine;

/**
 * A caller's thread: runs the operations the explorer hands it, one at a time, and blocks where the engine
 * blocks its caller (a blocking tryLock, a close). The explorer moves on only when every client is blocked or idle.
 */
final class Client extends Thread {

    final Instance instance;

    private final LinkedBlockingQueue<Runnable> mailbox = new LinkedBlockingQueue<>();

    private volatile boolean busy;

    /** What it is doing now (for the trace). */
    volatile String doing = "";

    /** Handles this client's thread holds bound to it (re-entry, closing from the owner). */
    final List<Section> held = new ArrayList<>();

    private final SimWorld world;

    /** @param instance null for a scheduler's thread */
    Client(Instance instance, String name, SimWorld world) {
        super(name);
        this.instance = instance;
        this.world = world;
        setDaemon(true);
    }

    /** One engine instance of the run, with its connection and its clients. */
    static final class Instance {

        final String name;

        final SimConnection connection;

        /** The server its engine runs on: its connection, or a quorum over its wires. */
        dev.leasehold.engine.server.LockServer server;

        DefaultLockEngine engine;

        /** Its schedulers (they must be shut down and empty after close). */
        final List<VirtualScheduler> lanes = new ArrayList<>();

        volatile boolean closing;

        volatile boolean closed;

        long closedAt = -1;

        /** When its engine's close() began (-1: not yet). */
        volatile long closingAt = -1;

        /** How long its engine's close() took on the virtual clock (ns; its bounded waits are on the engine's clock). */
        volatile long closeNanos;

        /** When a caller first called it with a wait (virtual ns; Long.MIN_VALUE: not yet). */
        volatile long firstWaitAt = Long.MIN_VALUE;

        /** Every connection the explorer drives for it: its one connection, or one per node of a quorum. */
        final List<SimConnection> wires;

        /** What Redis (a quorum: the quorum's verdicts) told it about its leases, as delivered. */
        final RedisSaid said;

        /** A quorum run: the quorum's view of each node (told of restarts as the node's Lettuce listener does). */
        final List<dev.leasehold.engine.quorum.QuorumNode> quorumNodes = new ArrayList<>();

        /** What closes after its engine (a quorum server, as the application context closes it), or nothing. */
        volatile Runnable afterEngineClose = () -> {
        };

        Instance(String name, SimConnection connection) {
            this(name, connection, List.of(connection), connection.said);
        }

        /** @param connection the wire its slowness is set on (a quorum's first node) */
        Instance(String name, SimConnection connection, List<SimConnection> wires, RedisSaid said) {
            this.name = name;
            this.connection = connection;
            this.wires = List.copyOf(wires);
            this.said = said;
            this.server = connection;
        }
    }

    /** Interrupted by the explorer and not yet woken by it. */
    private volatile boolean interruptAimed;

    /** The caller's thread is interrupted (while it waits in the engine). */
    void interruptNow() {
        interruptAimed = true;
        interrupt();
    }

    boolean interruptAimed() {
        return interruptAimed;
    }

    /** Handed an operation it has not taken yet (it looks idle, waiting on its mailbox, until it takes it). */
    private volatile boolean handedOver;

    void hand(String what, Runnable operation) {
        handedOver = true;
        busy = true;
        doing = what;
        world.trace(what); // before the client runs it: what it records comes after, in every replay
        mailbox.add(operation);
    }

    boolean idle() {
        return !busy;
    }

    /**
     * Blocked or idle: nothing of it runs until something else moves. A thread just woken still says WAITING until it
     * runs; where it waits on a queue's condition or a future, whether it was woken is read from the JDK's own
     * structures (the explorer's JVM opens java.util.concurrent for that).
     */
    boolean quiet() {
        if (handedOver) {
            return false;
        }
        if (interruptAimed) {
            if (isInterrupted()) {
                return false; // not woken by it yet (its state still says WAITING)
            }
            interruptAimed = false;
        }
        State state = getState();
        if (state == State.TERMINATED) {
            return true;
        }
        if (state != State.WAITING && state != State.TIMED_WAITING) {
            return false;
        }
        return !world.parks.woken(this) && !Wakeups.woken(this, LockSupport.getBlocker(this));
    }

    /** Asleep on a timer of its own (Thread.sleep, a timed park without a blocker): it looks again by itself. */
    boolean polling() {
        return getState() == State.TIMED_WAITING && LockSupport.getBlocker(this) == null;
    }

    private volatile boolean ending;

    @Override
    public void run() {
        while (!ending) {
            Runnable operation;
            try {
                operation = mailbox.take();
                handedOver = false;
            }
            catch (InterruptedException ex) {
                continue; // the run ends, or an interrupt came after its operation returned
            }
            try {
                operation.run();
            }
            catch (RuntimeException | Error ex) {
                // the operation recorded what it threw
            }
            finally {
                Thread.interrupted(); // an interrupt aimed at the finished operation is not the next one's
                doing = "";
                busy = false;
            }
        }
    }

    void end() {
        ending = true;
        interrupt();
    }
}
