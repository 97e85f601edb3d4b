package dev.leasehold.integration;

import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} backed by Leasehold, when {@code spring-integration-core} is on
 * the class path; backs off when the application defines its own {@code LockRegistry}.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(LockService.class)
public class LeaseholdLockRegistryAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    LeaseholdLockRegistry leaseholdLockRegistry(LockService lockService) {
        return new LeaseholdLockRegistry(lockService);
    }
}
