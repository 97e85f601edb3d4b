package dev.leasehold.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@code leasehold.lock.hold} observation. Declare a bean of this type (extending
 * {@link DefaultLockHoldObservationConvention} to keep its tags) to change them.
 */
public interface LockHoldObservationConvention extends ObservationConvention<LockHoldContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LockHoldContext;
    }
}
