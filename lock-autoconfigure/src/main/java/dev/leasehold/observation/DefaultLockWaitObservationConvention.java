package dev.leasehold.observation;

import io.micrometer.common.KeyValues;

import static dev.leasehold.observation.LeaseholdObservationDocumentation.HighCardinalityKeyNames.LOCK_KEY;

/**
 * {@code leasehold.lock.wait}, named {@code lock wait <name>} in traces; tagged with the lock's name, mode
 * and outcome; the full key only as a high-cardinality value (traces, never metric tags).
 */
public class DefaultLockWaitObservationConvention implements LockWaitObservationConvention {

    public static final DefaultLockWaitObservationConvention INSTANCE = new DefaultLockWaitObservationConvention();

    @Override
    public String getName() {
        return "leasehold.lock.wait";
    }

    @Override
    public String getContextualName(LockWaitContext context) {
        return "lock wait " + context.getLockName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LockWaitContext context) {
        return LeaseholdObservationDocumentation.lowCardinalityKeyValues(context);
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LockWaitContext context) {
        return KeyValues.of(LOCK_KEY.withValue(context.getKey()));
    }
}
