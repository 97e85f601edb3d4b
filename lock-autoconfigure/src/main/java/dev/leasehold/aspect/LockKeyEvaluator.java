package dev.leasehold.aspect;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

import dev.leasehold.LockKeyException;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;

/**
 * Evaluates a call's logical lock keys: {@code name} alone, or {@code name + ":" + value} per value of the
 * key expression. The expression sees the arguments by name ({@code #order}, with {@code -parameters}),
 * by position ({@code #p0}, {@code #a0}), {@code #root.method}, {@code #root.target}, {@code #root.args}
 * and beans ({@code @beanName}). A collection or array locks every element, de-duplicated and sorted, so
 * two calls with overlapping sets take their common keys in the same order and cannot deadlock.
 */
final class LockKeyEvaluator {

    private final ParameterNameDiscoverer parameterNames;

    private final BeanFactoryResolver beanResolver;

    LockKeyEvaluator(ParameterNameDiscoverer parameterNames, BeanFactory beanFactory) {
        this.parameterNames = parameterNames;
        this.beanResolver = beanFactory != null ? new BeanFactoryResolver(beanFactory) : null;
    }

    /** The sorted, distinct logical keys of one call; never empty. */
    List<String> keys(LockAttribute attribute, Object target, Class<?> targetClass, Object[] args) {
        if (attribute.key() == null) {
            return List.of(attribute.name());
        }
        Object value = evaluate(attribute, target, targetClass, args);
        if (value instanceof Collection<?> || (value != null && value.getClass().isArray())) {
            TreeSet<String> keys = new TreeSet<>();
            if (value instanceof Collection<?> elements) {
                for (Object element : elements) {
                    keys.add(attribute.name() + ":" + LockKeyRenderer.render(element, attribute));
                }
            }
            else {
                for (int i = 0; i < Array.getLength(value); i++) {
                    keys.add(attribute.name() + ":" + LockKeyRenderer.render(Array.get(value, i), attribute));
                }
            }
            if (keys.isEmpty()) {
                throw new LockKeyException(where(attribute) + " evaluated to an empty collection; the method was not run");
            }
            return List.copyOf(keys);
        }
        return List.of(attribute.name() + ":" + LockKeyRenderer.render(value, attribute));
    }

    /** Names the method and expression in messages; built only when something is wrong. */
    static String where(LockAttribute attribute) {
        return "The key '" + attribute.key().getExpressionString() + "' of @DistributedLock on " + attribute.description();
    }

    private Object evaluate(LockAttribute attribute, Object target, Class<?> targetClass, Object[] args) {
        Method method = attribute.method();
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new LockExpressionRoot(method, target, targetClass, args), method, args, parameterNames);
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        try {
            return attribute.key().getValue(context);
        }
        catch (EvaluationException ex) {
            LockKeyException failure = new LockKeyException(where(attribute) + " could not be evaluated ("
                    + ex.getMessage() + "); the method was not run");
            failure.initCause(ex);
            throw failure;
        }
    }

    /** What {@code #root} is in a key expression. */
    public static final class LockExpressionRoot {

        private final Method method;

        private final Object target;

        private final Class<?> targetClass;

        private final Object[] args;

        LockExpressionRoot(Method method, Object target, Class<?> targetClass, Object[] args) {
            this.method = method;
            this.target = target;
            this.targetClass = targetClass;
            this.args = args;
        }

        public Method getMethod() {
            return method;
        }

        public String getMethodName() {
            return method.getName();
        }

        public Object getTarget() {
            return target;
        }

        public Class<?> getTargetClass() {
            return targetClass;
        }

        public Object[] getArgs() {
            return args;
        }
    }
}
