package dev.leasehold.metrics;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.LockObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters for the locks of this instance. Keys are not tags (their number is unbounded).
 * <ul>
 * <li>{@code leasehold.lock.acquire} (timer): time to get a lock or give up, tagged {@code mode} and
 * {@code result} = {@code acquired}, {@code timeout} (others held it all the wait) or {@code error} (Redis failed)</li>
 * <li>{@code leasehold.lock.held} (timer): how long locks were held, tagged {@code mode}</li>
 * <li>{@code leasehold.lock.lost} (counter): leases lost while held</li>
 * <li>{@code leasehold.lock.renewal.failures} (counter): renewals not confirmed (retried until the lease ends)</li>
 * <li>{@code leasehold.lock.active} (gauge): locks held by this instance now</li>
 * <li>{@code leasehold.lock.waiting} (gauge): waits (blocking or async) of this instance asleep until a release now</li>
 * </ul>
 */
public class LockMetrics implements LockObserver, MeterBinder {

    private final Supplier<Number> activeLocks;

    private final Supplier<Number> waitingThreads;

    private volatile @Nullable Meters meters;

    /**
     * @param activeLocks locks this instance holds now
     * @param waitingThreads threads of this instance waiting for a release message now
     */
    public LockMetrics(Supplier<Number> activeLocks, Supplier<Number> waitingThreads) {
        this.activeLocks = activeLocks;
        this.waitingThreads = waitingThreads;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        this.meters = new Meters(registry, activeLocks, waitingThreads);
    }

    @Override
    public void acquired(String key, LockMode mode, long waitedNanos) {
        Meters current = meters;
        if (current != null) {
            Objects.requireNonNull(current.acquired.get(mode)).record(waitedNanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void notAcquired(String key, LockMode mode, long waitedNanos, @Nullable Throwable error) {
        Meters current = meters;
        if (current != null) {
            Objects.requireNonNull((error == null ? current.timedOut : current.failed).get(mode)).record(waitedNanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void released(String key, LockMode mode, long heldNanos) {
        Meters current = meters;
        if (current != null) {
            Objects.requireNonNull(current.held.get(mode)).record(heldNanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void lost(LockHandle handle, String reason) {
        Meters current = meters;
        if (current != null) {
            current.lost.increment();
        }
    }

    @Override
    public void renewalFailed(int locks) {
        Meters current = meters;
        if (current != null) {
            current.renewalFailures.increment(locks);
        }
    }

    private static final class Meters {

        final Map<LockMode, Timer> acquired = new EnumMap<>(LockMode.class);

        final Map<LockMode, Timer> timedOut = new EnumMap<>(LockMode.class);

        final Map<LockMode, Timer> failed = new EnumMap<>(LockMode.class);

        final Map<LockMode, Timer> held = new EnumMap<>(LockMode.class);

        final Counter lost;

        final Counter renewalFailures;

        Meters(MeterRegistry registry, Supplier<Number> activeLocks, Supplier<Number> waitingThreads) {
            for (LockMode mode : LockMode.values()) {
                acquired.put(mode, acquireTimer(registry, mode, "acquired"));
                timedOut.put(mode, acquireTimer(registry, mode, "timeout"));
                failed.put(mode, acquireTimer(registry, mode, "error"));
                held.put(mode, Timer.builder("leasehold.lock.held")
                    .description("How long distributed locks were held")
                    .tag("mode", mode.name())
                    .register(registry));
            }
            lost = Counter.builder("leasehold.lock.lost")
                .description("Leases lost while held: renewal refused or failed until the lease ran out, or a fixed lease expired")
                .register(registry);
            renewalFailures = Counter.builder("leasehold.lock.renewal.failures")
                .description("Lease renewals Redis did not confirm in time (retried until the lease ends)")
                .register(registry);
            Gauge.builder("leasehold.lock.active", activeLocks)
                .description("Distributed locks held by this instance now")
                .register(registry);
            Gauge.builder("leasehold.lock.waiting", waitingThreads)
                .description("Waits of this instance (blocking or async) asleep until a lock is released now")
                .register(registry);
        }

        private static Timer acquireTimer(MeterRegistry registry, LockMode mode, String result) {
            return Timer.builder("leasehold.lock.acquire")
                .description("Time to acquire a distributed lock or give up")
                .tag("mode", mode.name())
                .tag("result", result)
                .register(registry);
        }
    }
}
