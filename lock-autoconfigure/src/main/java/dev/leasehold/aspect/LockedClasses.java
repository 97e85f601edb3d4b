package dev.leasehold.aspect;

import java.lang.reflect.Method;

import dev.leasehold.DistributedLock;

import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Whether a class can have a {@code @DistributedLock} method at all: a method declared by the class, a superclass or
 * an interface carries the annotation (it targets methods only, so it is never meta-present). The class filter ahead
 * of the per-method search, which merges annotations over each method's hierarchy: asked for every method of every
 * bean at startup, that search was most of the starter's startup work and kept the JIT compiling Spring's annotation
 * scanning well after the application had started.
 */
final class LockedClasses {

    /** Per class, whether it or a supertype declares an annotated method; kept with the class (no loader is held). */
    private static final ClassValue<Boolean> IN_HIERARCHY = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            if (declaresLockedMethod(type)) {
                return true;
            }
            Class<?> superclass = type.getSuperclass();
            if (superclass != null && superclass != Object.class && IN_HIERARCHY.get(superclass)) {
                return true;
            }
            for (Class<?> implemented : type.getInterfaces()) {
                if (IN_HIERARCHY.get(implemented)) {
                    return true;
                }
            }
            return false;
        }
    };

    private LockedClasses() {
    }

    /** False only when no method the class has, declares, overrides or implements is annotated. */
    static boolean mayHaveLockedMethods(Class<?> type) {
        Class<?> userClass = ClassUtils.getUserClass(type);
        return AnnotationUtils.isCandidateClass(userClass, DistributedLock.class) && IN_HIERARCHY.get(userClass);
    }

    private static boolean declaresLockedMethod(Class<?> type) {
        Method[] methods;
        try {
            methods = type.getDeclaredMethods();
        }
        catch (LinkageError | SecurityException ex) {
            // a signature names a class that is not there: the full search decides, as it did before this filter
            return true;
        }
        for (Method method : methods) {
            if (method.isAnnotationPresent(DistributedLock.class)) {
                return true;
            }
        }
        return false;
    }
}
