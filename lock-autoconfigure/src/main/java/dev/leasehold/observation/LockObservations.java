package dev.leasehold.observation;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.leasehold.LockMode;
import dev.leasehold.aspect.DistributedLockNames;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.observation.LockObservationContext.Outcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer observations of the locks of this instance, so that metrics and traces come from one
 * instrumentation: {@code leasehold.lock.wait} for each wait (re-entries are not observed) and
 * {@code leasehold.lock.hold} for each hold, from the grant to its release or loss. Both are children of
 * the observation current on the thread that asked for the lock, also for {@code tryLockAsync}, so a
 * request's trace shows how long it waited for which key and how long it held it.
 */
public class LockObservations implements LockObserver {

    private final ObservationRegistry registry;

    private final @Nullable LockWaitObservationConvention waitConvention;

    private final @Nullable LockHoldObservationConvention holdConvention;

    public LockObservations(ObservationRegistry registry) {
        this(registry, null, null);
    }

    /**
     * @param waitConvention the application's own convention for waits, or null for the registry's global one
     * or else {@link DefaultLockWaitObservationConvention}
     * @param holdConvention likewise for holds
     */
    public LockObservations(ObservationRegistry registry, @Nullable LockWaitObservationConvention waitConvention,
            @Nullable LockHoldObservationConvention holdConvention) {
        this.registry = registry;
        this.waitConvention = waitConvention;
        this.holdConvention = holdConvention;
    }

    @Override
    public Attempt waitStarted(String key, LockMode mode) {
        if (registry.isNoop()) {
            return Attempt.NONE;
        }
        // the caller's thread: its current observation (a request's) is the parent of the wait and the hold
        Observation parent = registry.getCurrentObservation();
        LockWaitContext context = new LockWaitContext(key, lockName(key), mode);
        Observation wait = LeaseholdObservationDocumentation.LOCK_WAIT
            .observation(waitConvention, DefaultLockWaitObservationConvention.INSTANCE, () -> context, registry)
            .parentObservation(parent)
            .start();
        return new ObservedAttempt(context, wait, parent);
    }

    /** The annotation's name for an annotated call, else the key up to its first {@code :} (or all of it). */
    static String lockName(String key) {
        String annotated = DistributedLockNames.current();
        if (annotated != null) {
            return annotated;
        }
        int colon = key.indexOf(':');
        return colon > 0 ? key.substring(0, colon) : key;
    }

    /** One acquisition: its wait, then (granted) its hold, each stopped once. */
    private final class ObservedAttempt implements Attempt {

        private final LockWaitContext waitContext;

        private final Observation wait;

        private final @Nullable Observation parent;

        private final AtomicBoolean holdEnded = new AtomicBoolean();

        private volatile @Nullable LockHoldContext holdContext;

        private volatile @Nullable Observation hold;

        ObservedAttempt(LockWaitContext waitContext, Observation wait, @Nullable Observation parent) {
            this.waitContext = waitContext;
            this.wait = wait;
            this.parent = parent;
        }

        @Override
        public void granted(long fencingToken) {
            endWait(Outcome.ACQUIRED, null);
            LockHoldContext context = new LockHoldContext(waitContext.getKey(), waitContext.getLockName(),
                    waitContext.getMode(), fencingToken);
            holdContext = context;
            hold = LeaseholdObservationDocumentation.LOCK_HOLD
                .observation(holdConvention, DefaultLockHoldObservationConvention.INSTANCE, () -> context, registry)
                .parentObservation(parent)
                .start();
        }

        @Override
        public void timedOut() {
            endWait(Outcome.TIMED_OUT, null);
        }

        @Override
        public void failed(Throwable error) {
            endWait(Outcome.FAILED, error);
        }

        @Override
        public void cancelled() {
            endWait(Outcome.CANCELLED, null);
        }

        @Override
        public void released() {
            endHold(Outcome.RELEASED, null);
        }

        @Override
        public void lost(String reason) {
            endHold(Outcome.LOST, reason);
        }

        private void endWait(Outcome outcome, @Nullable Throwable error) {
            waitContext.setOutcome(outcome);
            if (error != null) {
                wait.error(error);
            }
            wait.stop();
        }

        /** The first of release and loss ends the hold (a lost lock is still closed later). */
        private void endHold(Outcome outcome, @Nullable String lostReason) {
            Observation current = hold;
            LockHoldContext context = holdContext;
            if (current == null || context == null || !holdEnded.compareAndSet(false, true)) {
                return;
            }
            context.setOutcome(outcome);
            context.setLostReason(lostReason);
            current.stop();
        }
    }
}
