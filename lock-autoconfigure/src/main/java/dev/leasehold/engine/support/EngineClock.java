package dev.leasehold.engine.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * The engine's one source of time, and of the executors whose delays follow it. In production it is
 * {@link System#nanoTime()} and plain {@link ScheduledThreadPoolExecutor}s: the switch is a {@code static final}
 * read once per JVM, so the JIT folds {@link #nanoTime()} to the system call (no indirection on the hot path).
 * A test JVM started with {@code -Dleasehold.engine.virtual-clock=true} may {@link #install} a virtual
 * {@link Source} (the deterministic explorer): time then moves only when the test says, and the engine's
 * timers, timeouts, asynchronous deliveries and timed parks end when the test says. Until one is installed, such a JVM
 * runs on the system's clock like any other.
 */
public final class EngineClock {

    /** Whether this JVM may replace the clock; read once, so production code pays nothing for it. */
    private static final boolean VIRTUAL = Boolean.getBoolean("leasehold.engine.virtual-clock");

    private static volatile @Nullable Source source;

    private EngineClock() {
    }

    /** A replacement for the system's time and the engine's executors (tests only). */
    public interface Source {

        long nanoTime();

        /** A single-threaded scheduler whose delays follow {@link #nanoTime()}. */
        ScheduledThreadPoolExecutor scheduler(ThreadFactory threads);

        /** Where asynchronous results are handed to their callers (the engine's delivery threads in production). */
        Executor deliveries();

        /**
         * {@link LockSupport#parkNanos(Object, long)} with {@code nanos} on {@link #nanoTime()}: returns once
         * {@link #unpark} was called for this thread (before or during the park), the time is up, the thread is
         * interrupted, or spuriously.
         */
        default void parkNanos(Object blocker, long nanos) {
            LockSupport.parkNanos(blocker, nanos);
        }

        /** {@link LockSupport#unpark(Thread)} for a thread that parks (or is about to) in {@link #parkNanos}. */
        default void unpark(Thread thread) {
            LockSupport.unpark(thread);
        }

        /** {@link CompletableFuture#get(long, TimeUnit)} with {@code nanos} on {@link #nanoTime()}. */
        default <T> T get(CompletableFuture<T> future, long nanos)
                throws InterruptedException, ExecutionException, TimeoutException {
            return future.get(nanos, TimeUnit.NANOSECONDS);
        }
    }

    /** Now, as the engine measures time: {@link System#nanoTime()} unless a test installed a virtual clock. */
    public static long nanoTime() {
        return VIRTUAL ? virtualNanoTime() : System.nanoTime();
    }

    private static long virtualNanoTime() {
        Source virtual = source;
        return virtual != null ? virtual.nanoTime() : System.nanoTime();
    }

    /** The single-threaded scheduler of one of the engine's roles (watchdog, waits, timeouts). */
    public static ScheduledThreadPoolExecutor scheduler(ThreadFactory threads) {
        Source virtual = VIRTUAL ? source : null;
        return virtual != null ? virtual.scheduler(threads) : new ScheduledThreadPoolExecutor(1, threads);
    }

    /**
     * Where asynchronous acquisitions hand their result to the caller: {@code own}, the engine's delivery threads,
     * unless a virtual clock is installed (asked at each hand-over in a JVM that may replace the clock).
     */
    public static Executor deliveries(Executor own) {
        if (!VIRTUAL) {
            return own;
        }
        return work -> {
            Source virtual = source;
            (virtual != null ? virtual.deliveries() : own).execute(work);
        };
    }

    /**
     * Parks the calling thread for at most {@code nanos} on the engine's clock ({@link LockSupport#parkNanos(Object,
     * long)} unless a virtual clock is installed, which then decides when the time is up); {@link #unpark} wakes it.
     */
    public static void parkNanos(Object blocker, long nanos) {
        Source virtual = VIRTUAL ? source : null;
        if (virtual != null) {
            virtual.parkNanos(blocker, nanos);
        }
        else {
            LockSupport.parkNanos(blocker, nanos);
        }
    }

    /** Wakes a thread parked (or about to park) in {@link #parkNanos}. */
    public static void unpark(Thread thread) {
        Source virtual = VIRTUAL ? source : null;
        if (virtual != null) {
            virtual.unpark(thread);
        }
        else {
            LockSupport.unpark(thread);
        }
    }

    /**
     * {@link CompletableFuture#get(long, TimeUnit)} with the limit on the engine's clock (a bounded wait of a blocking
     * call: {@code extend}, close); on the system's clock unless a virtual clock is installed.
     */
    public static <T> T get(CompletableFuture<T> future, long nanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        Source virtual = VIRTUAL ? source : null;
        return virtual != null ? virtual.get(future, nanos) : future.get(nanos, TimeUnit.NANOSECONDS);
    }

    /** Whether this JVM was started so that a virtual clock may be installed. */
    public static boolean replaceable() {
        return VIRTUAL;
    }

    /**
     * Installs a virtual clock (before the first engine is made); only in a JVM started with
     * {@code -Dleasehold.engine.virtual-clock=true}.
     */
    public static void install(Source virtual) {
        if (!VIRTUAL) {
            throw new IllegalStateException("start the JVM with -Dleasehold.engine.virtual-clock=true");
        }
        source = virtual;
    }
}
