package dev.leasehold.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observations of the lock engine, and their tags (low cardinality) and values (high cardinality). */
public enum LeaseholdObservationDocumentation implements ObservationDocumentation {

    /** Waiting for a lock: from the call until the grant, or until the caller gives up. */
    LOCK_WAIT {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultLockWaitObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeyNames.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return new KeyName[] { HighCardinalityKeyNames.LOCK_KEY };
        }
    },

    /** Holding a lock: from the grant until its release or the loss of its lease. */
    LOCK_HOLD {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultLockHoldObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeyNames.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeyNames.values();
        }
    };

    /** Tags of metrics and traces: their values are bounded. */
    public enum LowCardinalityKeyNames implements KeyName {

        /** The lock's name: the annotation's {@code name}, or the key up to its first {@code :}. */
        LOCK_NAME {
            @Override
            public String asString() {
                return "leasehold.lock.name";
            }
        },
        /** {@code EXCLUSIVE}, {@code READ} or {@code WRITE}. */
        MODE {
            @Override
            public String asString() {
                return "leasehold.lock.mode";
            }
        },
        /**
         * A wait's {@code acquired}, {@code timed_out}, {@code failed} or {@code cancelled}; a hold's
         * {@code released} or {@code lost}; {@code unknown} while it goes on.
         */
        OUTCOME {
            @Override
            public String asString() {
                return "leasehold.lock.outcome";
            }
        }
    }

    /** Values of traces only: unbounded, never metric tags. */
    public enum HighCardinalityKeyNames implements KeyName {

        /** The logical key, e.g. {@code show:4}. */
        LOCK_KEY {
            @Override
            public String asString() {
                return "leasehold.lock.key";
            }
        },
        /** The hold's fencing token. */
        FENCING_TOKEN {
            @Override
            public String asString() {
                return "leasehold.lock.fencing_token";
            }
        },
        /** Why a hold's lease was lost (only on a lost hold). */
        LOST_REASON {
            @Override
            public String asString() {
                return "leasehold.lock.lost_reason";
            }
        }
    }

    /** The tags both default conventions give: the lock's name, the mode and the outcome. */
    static KeyValues lowCardinalityKeyValues(LockObservationContext context) {
        LockObservationContext.Outcome outcome = context.getOutcome();
        return KeyValues.of(LowCardinalityKeyNames.LOCK_NAME.withValue(context.getLockName()),
                LowCardinalityKeyNames.MODE.withValue(context.getMode().name()),
                LowCardinalityKeyNames.OUTCOME.withValue(outcome != null ? outcome.value() : "unknown"));
    }
}
