package dev.leasehold.autoconfigure;

import dev.leasehold.LockService;
import dev.leasehold.ReactiveLockService;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A {@link ReactiveLockService} over the application's {@link LockService}, when Reactor is on the class path
 * (WebFlux applications); backs off when the application defines its own.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass(Mono.class)
@ConditionalOnBean(LockService.class)
public class LeaseholdReactiveAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ReactiveLockService leaseholdReactiveLockService(LockService lockService) {
        return new ReactiveLockService(lockService);
    }
}
