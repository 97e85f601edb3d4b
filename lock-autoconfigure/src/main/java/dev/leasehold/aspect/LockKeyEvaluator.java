package dev.leasehold.aspect;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import dev.leasehold.LockKeyException;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * Evaluates a call's logical lock keys: {@code name} alone, or {@code name + ":" + value} per value of the
 * key expression. The expression sees the arguments by name ({@code #order}, with {@code -parameters}),
 * by position ({@code #p0}, {@code #a0}), {@code #root.method}, {@code #root.target}, {@code #root.args}
 * and beans ({@code @beanName}). A collection or array locks every element, de-duplicated and sorted, so
 * two calls with overlapping sets take their common keys in the same order and cannot deadlock.
 */
final class LockKeyEvaluator {

    private final @Nullable BeanFactoryResolver beanResolver;

    LockKeyEvaluator(@Nullable BeanFactory beanFactory) {
        this.beanResolver = beanFactory != null ? new BeanFactoryResolver(beanFactory) : null;
    }

    /** The sorted, distinct logical keys of one call; never empty. */
    List<String> keys(LockAttribute attribute, @Nullable Object target, @Nullable Class<?> targetClass,
            @Nullable Object[] args) {
        Expression key = attribute.key();
        if (key == null) {
            return Objects.requireNonNull(attribute.keysWithoutExpression(), "the name is the key");
        }
        Object value = evaluate(key, attribute, target, targetClass, args);
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
        Expression key = attribute.key();
        return "The key '" + (key != null ? key.getExpressionString() : "") + "' of @DistributedLock on " + attribute.description();
    }

    private @Nullable Object evaluate(Expression key, LockAttribute attribute, @Nullable Object target,
            @Nullable Class<?> targetClass, @Nullable Object[] args) {
        ArgumentsContext context = new ArgumentsContext(
                new LockExpressionRoot(attribute.method(), target, targetClass, args), attribute.arguments(), args);
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        try {
            return key.getValue(context);
        }
        catch (EvaluationException ex) {
            LockKeyException failure = new LockKeyException(where(attribute) + " could not be evaluated ("
                    + ex.getMessage() + "); the method was not run");
            failure.initCause(ex);
            throw failure;
        }
    }

    /**
     * Resolves {@code #name}, {@code #p0} and {@code #a0} from the arguments by an index worked out once
     * per method, like Spring's {@code MethodBasedEvaluationContext} but without discovering parameter
     * names and copying every argument into a map on each call.
     */
    private static final class ArgumentsContext extends StandardEvaluationContext {

        private final Map<String, Integer> arguments;

        private final Object[] args;

        ArgumentsContext(Object root, Map<String, Integer> arguments, Object[] args) {
            super(root);
            this.arguments = arguments;
            this.args = args;
        }

        @Override
        public @Nullable Object lookupVariable(String name) {
            Integer index = arguments.get(name);
            return index != null && index < args.length ? args[index] : super.lookupVariable(name);
        }
    }

    /** What {@code #root} is in a key expression. */
    public static final class LockExpressionRoot {

        private final Method method;

        private final @Nullable Object target;

        private final @Nullable Class<?> targetClass;

        private final @Nullable Object[] args;

        LockExpressionRoot(Method method, @Nullable Object target, @Nullable Class<?> targetClass, @Nullable Object[] args) {
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

        public @Nullable Object getTarget() {
            return target;
        }

        public @Nullable Class<?> getTargetClass() {
            return targetClass;
        }

        public Object[] getArgs() {
            return args;
        }
    }
}
