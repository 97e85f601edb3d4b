package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.function.Supplier;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockService;
import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;

/**
 * Applies {@link DistributedLockInterceptor} to the methods of Spring beans that carry
 * {@code @DistributedLock} (on the class's method, or on an interface or superclass method it overrides),
 * through the application's auto-proxy creator, like {@code @Transactional} and {@code @Cacheable}.
 * Its order decides which advice wraps which: by default it wraps the transaction and cache advice, so
 * the lock is taken before a transaction begins and released after it ended.
 */
public class DistributedLockAdvisor extends AbstractPointcutAdvisor {

    /** Just outside the transaction and cache advice, which Spring Boot orders {@code LOWEST_PRECEDENCE}. */
    public static final int DEFAULT_ORDER = LOWEST_PRECEDENCE - 100;

    private final StaticMethodMatcherPointcut pointcut;

    private final DistributedLockInterceptor interceptor;

    public DistributedLockAdvisor(LockAttributeSource attributes, BeanFactory beanFactory,
            Supplier<LockService> lockService, Supplier<Duration> defaultWaitTime, int order) {
        this.interceptor = new DistributedLockInterceptor(attributes, new LockKeyEvaluator(beanFactory), lockService,
                defaultWaitTime);
        this.pointcut = new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return attributes.getAttribute(method, targetClass) != null;
            }
        };
        this.pointcut.setClassFilter(LockedClasses::mayHaveLockedMethods);
        setOrder(order);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}
