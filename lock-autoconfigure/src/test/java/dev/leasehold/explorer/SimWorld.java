package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.engine.support.EngineClock;

/**
 * The simulated world of one exploration run: the virtual clock, the lanes of work the engine left for later (its
 * schedulers' tasks, asynchronous deliveries), and the trace of what the explorer did. Time moves only when the
 * explorer moves it; nothing runs unless the explorer runs it.
 */
final class SimWorld {

    /** Virtual time starts far from 0 (the engine subtracts times; nothing may assume a small clock). */
    static final long ORIGIN = 1_000_000_000_000L;

    private volatile long now = ORIGIN;

    private final AtomicLong seq = new AtomicLong();

    final List<VirtualScheduler> lanes = new CopyOnWriteArrayList<>();

    /** Where asynchronous acquisitions hand their results over (the common pool in production). */
    final VirtualScheduler deliveries;

    private volatile Thread explorerThread;

    /** The engine's timed parks (a lingering release), ended by the clock or the engine. */
    final Parks parks = new Parks(this);

    /** Waits until every thread of the run is blocked or idle (the explorer's settler, once it is made). */
    private volatile Runnable settler = () -> {
    };

    final List<String> trace = new ArrayList<>();

    SimWorld() {
        this.deliveries = new VirtualScheduler(this, work -> new Thread(work, "leasehold-deliveries"));
    }

    long now() {
        return now;
    }

    /** Nanoseconds since the run began (the history's clock). */
    long elapsed() {
        return now - ORIGIN;
    }

    /** Moves the clock (if {@code at} is ahead); whether a thread parked on it was woken (it runs now). */
    boolean advanceTo(long at) {
        if (at - now > 0) {
            now = at;
        }
        return parks.timeUp(now);
    }

    /** Moves the clock on; whether a thread parked on it was woken (it runs now). */
    boolean advanceBy(long nanos) {
        now += nanos;
        return parks.timeUp(now);
    }

    void settler(Runnable settler) {
        this.settler = settler;
    }

    /**
     * Within a step that wakes several threads (on the explorer's thread): lets the ones woken so far run until they
     * block, before the step wakes the next, so that they never run side by side.
     */
    void settle() {
        settler.run();
    }

    long nextSeq() {
        return seq.incrementAndGet();
    }

    void explorerThread(Thread thread) {
        this.explorerThread = thread;
    }

    boolean isExplorerThread() {
        return Thread.currentThread() == explorerThread;
    }

    private final java.util.Map<String, String> aliases = new java.util.LinkedHashMap<>();

    private final java.util.Map<String, String> tokenNames = new java.util.HashMap<>();

    /** Names {@code raw} (an instance id: random) {@code alias} in the trace, so that a replay's trace is the same. */
    synchronized void alias(String raw, String alias) {
        aliases.put(raw, alias);
    }

    /** An owner token's name in the trace: t1, t2... in the order the server first saw them. */
    synchronized String tokenName(String token) {
        return tokenNames.computeIfAbsent(token, t -> "t" + (tokenNames.size() + 1));
    }

    synchronized void trace(String step) {
        for (java.util.Map.Entry<String, String> alias : aliases.entrySet()) {
            step = step.replace(alias.getKey(), alias.getValue());
        }
        trace.add(String.format(java.util.Locale.ROOT, "%9.3f ms  %s", elapsed() / 1e6, step));
    }

    /** The engine's clock for every engine of this JVM: the world of the run in progress. */
    static final class Clock implements EngineClock.Source {

        static final Clock INSTANCE = new Clock();

        private volatile SimWorld world;

        private Clock() {
        }

        static synchronized void use(SimWorld world) {
            if (INSTANCE.world == null) {
                EngineClock.install(INSTANCE);
            }
            INSTANCE.world = world;
        }

        @Override
        public long nanoTime() {
            SimWorld current = world;
            return current == null ? ORIGIN : current.now();
        }

        @Override
        public ScheduledThreadPoolExecutor scheduler(ThreadFactory threads) {
            return new VirtualScheduler(world, threads);
        }

        @Override
        public Executor deliveries() {
            return world.deliveries;
        }

        @Override
        public void parkNanos(Object blocker, long nanos) {
            world.parks.parkNanos(blocker, nanos);
        }

        @Override
        public void unpark(Thread thread) {
            world.parks.unpark(thread);
        }

        @Override
        public <T> T get(java.util.concurrent.CompletableFuture<T> future, long nanos)
                throws InterruptedException, java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException {
            return world.parks.get(future, nanos);
        }
    }
}
