package dev.leasehold.autoconfigure;

import dev.leasehold.LockService;
import dev.leasehold.aspect.DistributedLockAdvisor;
import dev.leasehold.aspect.DistributedLockMethodValidator;
import dev.leasehold.aspect.LockAttributeSource;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * {@code @DistributedLock} on Spring beans: an advisor applied by the auto-proxy creator (registered if the
 * application has none), and a check of every annotated method at bean creation. Active whenever
 * {@code leasehold.enabled} is not false, also without Redis, so that annotated methods in an application
 * without a {@code LockService} fail at startup rather than run unlocked.
 * <p>
 * The beans here are infrastructure created early, with the other advisors and post-processors; they
 * reach the {@code LockService} and the properties only on the first call, so that creating them does
 * not create the Redis connection or anything the application still post-processes.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "leasehold.enabled", matchIfMissing = true)
@Import(LeaseholdAnnotationAutoConfiguration.AutoProxyRegistrar.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class LeaseholdAnnotationAutoConfiguration {

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LockAttributeSource leaseholdLockAttributeSource(Environment environment) {
        return new LockAttributeSource(environment, new DefaultParameterNameDiscoverer());
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DistributedLockMethodValidator leaseholdLockMethodValidator(ObjectProvider<LockAttributeSource> attributes) {
        return new DistributedLockMethodValidator(attributes);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static DistributedLockAdvisor leaseholdLockAdvisor(LockAttributeSource attributes, BeanFactory beanFactory,
            ObjectProvider<LockService> lockService, Environment environment) {
        // bound here rather than injected: the properties bean would be created too early to be post-processed
        LeaseholdProperties properties = Binder.get(environment)
            .bindOrCreate("leasehold", LeaseholdProperties.class);
        return new DistributedLockAdvisor(attributes, beanFactory, lockService::getIfAvailable,
                properties::getWaitTime, properties.getAdviceOrder());
    }

    /** Makes sure advisors are applied, as {@code @EnableCaching} does; Spring Boot's AOP set-up may upgrade it. */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
