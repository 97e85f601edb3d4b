package dev.leasehold.actuator;

import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.quorum.QuorumLockServer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code leasehold} actuator endpoint, when Actuator is present and the endpoint is exposed. */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean({ DefaultLockEngine.class, LockEngineSettings.class })
@ConditionalOnAvailableEndpoint(LeaseholdEndpoint.class)
public class LeaseholdEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LeaseholdEndpoint leaseholdEndpoint(DefaultLockEngine engine, LockEngineSettings settings,
            ObjectProvider<QuorumLockServer> quorum) {
        return new LeaseholdEndpoint(engine, settings, quorum.getIfAvailable());
    }
}
