package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.DistributedLock;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * At AOT processing time, for every bean with {@code @DistributedLock} methods: the reflection a native
 * image needs at run time. The annotated methods are read reflectively (attributes, parameter names),
 * fallbacks are invoked reflectively, and key expressions such as {@code #order.id} read the argument
 * types' public methods. Registered in {@code META-INF/spring/aot.factories}.
 */
public class DistributedLockBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

    @Override
    public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
        Class<?> beanClass = ClassUtils.getUserClass(registeredBean.getBeanClass());
        if (!LockedClasses.mayHaveLockedMethods(beanClass)) {
            return null; // the usual bean: no method of its hierarchy is annotated, none is searched
        }
        List<Method> annotated = new ArrayList<>();
        List<Method> fallbacks = new ArrayList<>();
        ReflectionUtils.doWithMethods(beanClass, method -> {
            DistributedLock annotation = LockAttributeSource.findAnnotation(method, beanClass);
            if (annotation != null) {
                annotated.add(method);
                if (StringUtils.hasText(annotation.fallback())) {
                    String name = annotation.fallback().trim();
                    ReflectionUtils.doWithMethods(beanClass, fallbacks::add,
                            candidate -> candidate.getName().equals(name));
                }
            }
        }, method -> !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class);
        if (annotated.isEmpty()) {
            return null;
        }
        return (generationContext, code) -> {
            ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
            for (Method method : annotated) {
                reflection.registerMethod(method, ExecutableMode.INVOKE);
                for (Class<?> parameter : method.getParameterTypes()) {
                    if (!parameter.isPrimitive() && !parameter.getName().startsWith("java.")) {
                        reflection.registerType(parameter, MemberCategory.INVOKE_PUBLIC_METHODS);
                    }
                }
            }
            for (Method fallback : fallbacks) {
                reflection.registerMethod(fallback, ExecutableMode.INVOKE);
            }
        };
    }
}
