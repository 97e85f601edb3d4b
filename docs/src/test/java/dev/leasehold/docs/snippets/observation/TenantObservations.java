package dev.leasehold.docs.snippets.observation;

import dev.leasehold.observation.DefaultLockWaitObservationConvention;
import dev.leasehold.observation.LockWaitContext;
import dev.leasehold.observation.LockWaitObservationConvention;
import io.micrometer.common.KeyValues;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class TenantObservations {

    // tag::convention[]
    @Bean
    LockWaitObservationConvention tenantTaggedLockWaits() {   // keys like "show:<tenant>:<id>"
        return new DefaultLockWaitObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(LockWaitContext context) {
                return super.getLowCardinalityKeyValues(context).and("tenant", context.getKey().split(":")[1]);
            }
        };
    }
    // end::convention[]
}
