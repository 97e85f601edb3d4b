package dev.leasehold.observation;

import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.DefaultLockEngine;
import io.micrometer.observation.ObservationRegistry;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Observations of waits and holds ({@link LockObservations}) when the application has an
 * {@link ObservationRegistry} (Spring Boot makes one with Actuator): with Micrometer Tracing, a request's
 * trace shows its lock waits and holds. A {@link LockWaitObservationConvention} or
 * {@link LockHoldObservationConvention} bean replaces the default names and tags.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ ObservationRegistry.class, DefaultLockEngine.class })
public class LeaseholdObservationAutoConfiguration {

    /** A LockObserver: the engine (created after it) tells it about every wait and hold. */
    @Bean
    @ConditionalOnMissingBean
    LockObservations leaseholdLockObservations(ObservationRegistry registry,
            ObjectProvider<LockWaitObservationConvention> waitConvention,
            ObjectProvider<LockHoldObservationConvention> holdConvention) {
        return new LockObservations(registry, waitConvention.getIfAvailable(), holdConvention.getIfAvailable());
    }
}
