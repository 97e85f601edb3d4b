package dev.leasehold.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@code leasehold.lock.wait} observation. Declare a bean of this type (extending
 * {@link DefaultLockWaitObservationConvention} to keep its tags) to change them.
 */
public interface LockWaitObservationConvention extends ObservationConvention<LockWaitContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LockWaitContext;
    }
}
