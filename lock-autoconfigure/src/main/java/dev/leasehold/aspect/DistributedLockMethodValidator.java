package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockService;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.ProxyConfig;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.util.ClassUtils;

/**
 * Checks every {@code @DistributedLock} method of every bean when the bean is created, so a mistake fails
 * the application at startup instead of a production call: bad attributes (through
 * {@link LockAttributeSource}), methods a proxy cannot intercept (static, private, final), and annotated
 * methods in an application that has no {@code LockService}. Without this a lock would silently not be
 * taken.
 */
public class DistributedLockMethodValidator implements BeanPostProcessor, BeanFactoryAware {

    private final ObjectProvider<LockAttributeSource> attributes;

    private final Set<Class<?>> validClasses = ConcurrentHashMap.newKeySet();

    private @Nullable ListableBeanFactory beanFactory;

    public DistributedLockMethodValidator(ObjectProvider<LockAttributeSource> attributes) {
        this.attributes = attributes;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory listable ? listable : null;
    }

    /** Before initialization: ahead of the auto-proxy creator, whose pointcut would hide the message. */
    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> userClass = ClassUtils.getUserClass(AopUtils.getTargetClass(bean));
        if (validClasses.contains(userClass) || !LockedClasses.mayHaveLockedMethods(userClass)) {
            return bean;
        }
        Map<Method, DistributedLock> annotated = MethodIntrospector.selectMethods(userClass,
                (MethodIntrospector.MetadataLookup<DistributedLock>) method -> LockAttributeSource
                    .findAnnotation(method, userClass));
        if (!annotated.isEmpty()) {
            validate(bean, beanName, userClass, annotated.keySet());
        }
        validClasses.add(userClass);
        return bean;
    }

    private void validate(Object bean, String beanName, Class<?> userClass, Set<Method> methods) {
        if (beanFactory != null && beanFactory.getBeanNamesForType(LockService.class, true, false).length == 0) {
            throw new InvalidDistributedLockException("Bean '" + beanName + "' (" + userClass.getName()
                    + ") has @DistributedLock methods, but there is no LockService: Leasehold found no Redis "
                    + "connection factory", "Configure Redis with spring.data.redis.* (host, port, or a Sentinel or "
                    + "Cluster), or set leasehold.enabled=false to run the methods without locks.", null);
        }
        LockAttributeSource source = attributes.getObject();
        boolean interfaceProxy = willBeInterfaceProxy(userClass);
        for (Method method : methods) {
            String problem = unproxyable(method, interfaceProxy);
            if (problem != null) {
                throw new InvalidDistributedLockException("@DistributedLock on " + userClass.getName() + "."
                        + method.getName() + " would never take its lock: the method is " + problem
                        + ", and Spring's proxies only intercept instance methods they can override",
                        "Make the method public (or protected or package-visible), non-static and non-final, "
                        + "or remove the annotation.", null);
            }
            source.getAttribute(method, userClass);
        }
    }

    private boolean willBeInterfaceProxy(Class<?> userClass) {
        if (beanFactory == null || !beanFactory.containsBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME)) {
            return false;
        }
        Object creator = beanFactory.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME);
        return creator instanceof ProxyConfig config && !config.isProxyTargetClass()
                && ClassUtils.getAllInterfacesForClass(userClass).length > 0;
    }

    private static @Nullable String unproxyable(Method method, boolean interfaceProxy) {
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers)) {
            return "static";
        }
        if (Modifier.isPrivate(modifiers)) {
            return "private";
        }
        boolean finalMethod = Modifier.isFinal(modifiers) || Modifier.isFinal(method.getDeclaringClass().getModifiers());
        if (finalMethod && !(interfaceProxy && declaredByAnInterface(method))) {
            return "final (a class proxy cannot override it)";
        }
        return null;
    }

    private static boolean declaredByAnInterface(Method method) {
        for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(method.getDeclaringClass())) {
            if (ClassUtils.hasMethod(type, method.getName(), method.getParameterTypes())) {
                return true;
            }
        }
        return false;
    }
}
