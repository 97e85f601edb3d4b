package dev.leasehold.observation;

import io.micrometer.common.KeyValues;

import static dev.leasehold.observation.LeaseholdObservationDocumentation.HighCardinalityKeyNames.FENCING_TOKEN;
import static dev.leasehold.observation.LeaseholdObservationDocumentation.HighCardinalityKeyNames.LOCK_KEY;
import static dev.leasehold.observation.LeaseholdObservationDocumentation.HighCardinalityKeyNames.LOST_REASON;

/**
 * {@code leasehold.lock.hold}, named {@code lock hold <name>} in traces; tagged with the lock's name, mode
 * and outcome; the key, the fencing token and why a lease was lost only as high-cardinality values.
 */
public class DefaultLockHoldObservationConvention implements LockHoldObservationConvention {

    public static final DefaultLockHoldObservationConvention INSTANCE = new DefaultLockHoldObservationConvention();

    @Override
    public String getName() {
        return "leasehold.lock.hold";
    }

    @Override
    public String getContextualName(LockHoldContext context) {
        return "lock hold " + context.getLockName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LockHoldContext context) {
        return LeaseholdObservationDocumentation.lowCardinalityKeyValues(context);
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LockHoldContext context) {
        KeyValues values = KeyValues.of(LOCK_KEY.withValue(context.getKey()),
                FENCING_TOKEN.withValue(Long.toString(context.getFencingToken())));
        String lostReason = context.getLostReason();
        return lostReason != null ? values.and(LOST_REASON.withValue(lostReason)) : values;
    }
}
