package dev.leasehold.observation;

import dev.leasehold.LockMode;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What the lock observations know about one acquisition: the logical key, the lock's name (a bounded
 * tag), the mode and, once it ended, the outcome.
 */
public class LockObservationContext extends Observation.Context {

    private final String key;

    private final String lockName;

    private final LockMode mode;

    private volatile @Nullable Outcome outcome;

    public LockObservationContext(String key, String lockName, LockMode mode) {
        this.key = key;
        this.lockName = lockName;
        this.mode = mode;
    }

    /** The logical key as given (before {@code leasehold.key-prefix}), e.g. {@code show:4}. */
    public String getKey() {
        return key;
    }

    /**
     * The lock's name: the {@code @DistributedLock} {@code name} of an annotated call, else the key up to its
     * first {@code :} ({@code show} for {@code show:4}), or the whole key when it has none.
     */
    public String getLockName() {
        return lockName;
    }

    public LockMode getMode() {
        return mode;
    }

    /** How it ended; null while it goes on. */
    public @Nullable Outcome getOutcome() {
        return outcome;
    }

    public void setOutcome(Outcome outcome) {
        this.outcome = outcome;
    }

    /** How a wait ({@code acquired} ... {@code cancelled}) or a hold ({@code released}, {@code lost}) ended. */
    public enum Outcome {

        /** The wait ended with the lock. */
        ACQUIRED("acquired"),
        /** Other owners held the key for the whole wait. */
        TIMED_OUT("timed_out"),
        /** The wait ended with an error (Redis failed, or the application shut down). */
        FAILED("failed"),
        /** The caller gave up waiting. */
        CANCELLED("cancelled"),
        /** The hold ended with the release of the lock. */
        RELEASED("released"),
        /** The hold ended with the loss of the lease: from then on another owner may hold the key. */
        LOST("lost");

        private final String value;

        Outcome(String value) {
            this.value = value;
        }

        /** The tag value. */
        public String value() {
            return value;
        }
    }
}
