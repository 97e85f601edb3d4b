package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.OnLockFailure;
import dev.leasehold.aspect.LockAttribute.ResultKind;
import dev.leasehold.engine.support.DurationLimits;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Finds and parses {@code @DistributedLock} on a method, once per method and target class (as Spring's
 * transaction and cache attribute sources do). The annotation may sit on the class's method or on an
 * interface or superclass method it overrides. Everything that can be checked without calling the method
 * is checked here, so a typo fails the application at startup with the class, method and attribute named.
 */
public class LockAttributeSource {

    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            LockAttributeSource.class.getClassLoader());

    private final Map<MethodClassKey, Optional<LockAttribute>> cache = new ConcurrentHashMap<>(256);

    private final @Nullable PropertyResolver placeholders;

    private final ParameterNameDiscoverer parameterNames;

    // MIXED: expressions are compiled to bytecode after a few calls, and fall back to interpretation if needed
    private final SpelExpressionParser parser = new SpelExpressionParser(
            new SpelParserConfiguration(SpelCompilerMode.MIXED, LockAttributeSource.class.getClassLoader()));

    /**
     * @param placeholders resolves {@code ${...}} in {@code name}, {@code waitTime} and {@code leaseTime}
     * (the application's {@code Environment}); null for none
     */
    public LockAttributeSource(@Nullable PropertyResolver placeholders, ParameterNameDiscoverer parameterNames) {
        this.placeholders = placeholders;
        this.parameterNames = parameterNames;
    }

    /** The attribute of a method called on a target of the given class, or null when it is not annotated. */
    public @Nullable LockAttribute getAttribute(Method method, @Nullable Class<?> targetClass) {
        MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
        Optional<LockAttribute> cached = cache.get(cacheKey);
        if (cached == null) {
            // parse outside computeIfAbsent: a parse error must not poison the map, and parsing may be slow
            Optional<LockAttribute> parsed = Optional.ofNullable(parse(method, targetClass));
            cached = cache.computeIfAbsent(cacheKey, key -> parsed);
        }
        return cached.orElse(null);
    }

    private @Nullable LockAttribute parse(Method method, @Nullable Class<?> targetClass) {
        Class<?> userClass = targetClass != null ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
        Method specific = AopUtils.getMostSpecificMethod(method, userClass);
        DistributedLock annotation = findAnnotation(specific, userClass);
        if (annotation == null && specific != method) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
        }
        if (annotation == null) {
            return null;
        }
        String where = "@DistributedLock on " + userClass.getName() + "." + specific.getName()
                + "(" + parameterList(specific) + ")";
        String name = resolve(annotation.name(), "name", where);
        if (!StringUtils.hasText(name)) {
            name = specific.getDeclaringClass().getName() + "." + specific.getName();
        }
        Expression key = parseKey(annotation.key(), specific, where);
        Duration waitTime = duration(annotation.waitTime(), "waitTime", where, true);
        Duration leaseTime = duration(annotation.leaseTime(), "leaseTime", where, false);
        Duration holdAtLeast = duration(annotation.holdAtLeast(), "holdAtLeast", where, true);
        atMostMax(leaseTime, "leaseTime", annotation.leaseTime(), where);
        atMostMax(holdAtLeast, "holdAtLeast", annotation.holdAtLeast(), where);
        if (holdAtLeast != null && leaseTime != null && holdAtLeast.compareTo(leaseTime) > 0) {
            throw new IllegalStateException(where + ": holdAtLeast '" + annotation.holdAtLeast()
                    + "' must not be longer than leaseTime '" + annotation.leaseTime()
                    + "' (the key would outlive the lease it was taken with)");
        }
        Class<?> returnType = specific.getReturnType();
        ResultKind resultKind = ResultKind.PLAIN;
        ReactiveAdapter reactiveAdapter = null;
        if (SuspendingFunctions.isSuspending(specific)) {
            if (!SuspendingFunctions.SUPPORTED) {
                throw new InvalidDistributedLockException(where + " is a suspend function, and locking around "
                        + "one needs kotlinx-coroutines-reactor (Spring AOP awaits it as a Mono): add "
                        + "dev.leasehold:leasehold-kotlin, which brings it");
            }
            resultKind = ResultKind.REACTIVE;
            reactiveAdapter = SuspendingFunctions.adapter(specific);
        }
        else if (CompletionStage.class.isAssignableFrom(returnType)) {
            resultKind = ResultKind.COMPLETION_STAGE;
        }
        else if (REACTOR_PRESENT && (reactiveAdapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType)) != null) {
            resultKind = ResultKind.REACTIVE;
        }
        Method fallback = null;
        boolean fallbackTakesException = false;
        if (StringUtils.hasText(annotation.fallback())) {
            fallback = findFallback(userClass, specific, annotation.fallback().trim(), where);
            fallbackTakesException = fallback.getParameterCount() > specific.getParameterCount();
            ReflectionUtils.makeAccessible(fallback);
        }
        String description = userClass.getSimpleName() + "." + specific.getName();
        Supplier<@Nullable Object> skipValue = SkipValues.forReturnType(specific, where);
        if (annotation.onFailure() == OnLockFailure.SKIP && fallback == null) {
            skipValue.get(); // fails now if the return type has no empty value
        }
        return new LockAttribute(specific, description, name, key, waitTime, leaseTime, annotation.mode(),
                annotation.onFailure(), fallback, fallbackTakesException, resultKind, reactiveAdapter,
                key == null ? List.of(name) : null, arguments(specific), skipValue,
                holdAtLeast == null || holdAtLeast.isZero() ? null : holdAtLeast);
    }

    /**
     * {@code @DistributedLock} on the method, on a method it overrides, or on an interface method of the
     * class that it implements, also when a superclass that does not know the interface provides it (a
     * class proxy then calls the superclass method).
     */
    static @Nullable DistributedLock findAnnotation(Method method, Class<?> userClass) {
        DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
        if (annotation != null || Modifier.isStatic(method.getModifiers())) {
            return annotation;
        }
        for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(userClass)) {
            Method declared = ClassUtils.getMethodIfAvailable(type, method.getName(), method.getParameterTypes());
            if (declared != null) {
                annotation = AnnotatedElementUtils.findMergedAnnotation(declared, DistributedLock.class);
                if (annotation != null) {
                    return annotation;
                }
            }
        }
        return null;
    }

    /** The variables a key may name, by argument index: parameter names (when compiled in), #pN and #aN. */
    private Map<String, Integer> arguments(Method method) {
        Map<String, Integer> arguments = new HashMap<>();
        String[] names = parameterNames.getParameterNames(method);
        for (int i = 0; i < method.getParameterCount(); i++) {
            if (names != null && i < names.length) { // a suspend function's Continuation has no name
                arguments.put(names[i], i);
            }
            arguments.put("p" + i, i);
            arguments.put("a" + i, i);
        }
        return Map.copyOf(arguments);
    }

    private String resolve(String value, String attribute, String where) {
        if (placeholders == null || !value.contains("${")) {
            return value.trim();
        }
        try {
            return placeholders.resolveRequiredPlaceholders(value).trim();
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidDistributedLockException(where + ": " + attribute + " '" + value + "' cannot be resolved: "
                    + ex.getMessage(), ex);
        }
    }

    /** A lease or hold longer than the engine accepts fails at startup, not at the first call (after a grant). */
    private static void atMostMax(@Nullable Duration duration, String attribute, String value, String where) {
        try {
            DurationLimits.atMostMax(attribute, duration, "");
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidDistributedLockException(where + ": " + attribute + " '" + value + "': " + ex.getMessage(), ex);
        }
    }

    private @Nullable Duration duration(String value, String attribute, String where, boolean zeroAllowed) {
        String text = resolve(value, attribute, where);
        if (text.isEmpty()) {
            return null;
        }
        Duration duration;
        try {
            duration = DurationStyle.detectAndParse(text);
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidDistributedLockException(where + ": " + attribute + " '" + value
                    + "' is not a duration (write it like 500ms, 5s, 1m or PT5S)", ex);
        }
        if (duration.isNegative() || (!zeroAllowed && duration.isZero())) {
            throw new InvalidDistributedLockException(where + ": " + attribute + " '" + value + "' must be "
                    + (zeroAllowed ? "zero or positive" : "positive (leave it empty for a watchdog-renewed lease)"));
        }
        return duration;
    }

    private @Nullable Expression parseKey(String source, Method method, String where) {
        if (!StringUtils.hasText(source)) {
            return null;
        }
        Expression expression;
        try {
            expression = parser.parseExpression(source);
        }
        catch (ParseException ex) {
            throw new InvalidDistributedLockException(where + ": key '" + source + "' is not a valid SpEL expression: "
                    + ex.getMessage(), ex);
        }
        checkVariables(expression, source, method, where);
        return expression;
    }

    /** A {@code #name} that is no parameter is a typo that would otherwise lock on "null" at run time. */
    private void checkVariables(Expression expression, String source, Method method, String where) {
        String[] names = parameterNames.getParameterNames(method);
        if (names == null || !(expression instanceof SpelExpression spel)) {
            return; // without parameter names only #p0/#a0 work, and nothing can be checked
        }
        Set<String> known = new HashSet<>(Arrays.asList(names));
        for (int i = 0; i < method.getParameterCount(); i++) {
            known.add("p" + i);
            known.add("a" + i);
        }
        known.add("root");
        known.add("this");
        List<String> unknown = new ArrayList<>();
        collectVariables(spel.getAST(), known, unknown);
        if (!unknown.isEmpty()) {
            throw new InvalidDistributedLockException(where + ": key '" + source + "' refers to " + unknown
                    + ", which is no parameter; the parameters are " + Arrays.toString(names)
                    + " (also #p0/#a0 by position)");
        }
    }

    private static void collectVariables(SpelNode node, Set<String> known, List<String> unknown) {
        if (node instanceof VariableReference) {
            String variable = node.toStringAST().substring(1);
            if (!known.contains(variable)) {
                unknown.add("#" + variable);
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collectVariables(node.getChild(i), known, unknown);
        }
    }

    private static Method findFallback(Class<?> userClass, Method method, String name, String where) {
        Class<?>[] parameters = method.getParameterTypes();
        List<Method> candidates = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, candidates::add, candidate -> candidate.getName().equals(name)
                && !candidate.isBridge() && fallbackParametersMatch(candidate, method));
        String expected = name + "(" + parameterList(method) + ")" + " or " + name + "(" + parameterList(method)
                + (parameters.length > 0 ? ", " : "") + "LockAcquisitionException)";
        if (candidates.isEmpty()) {
            throw new InvalidDistributedLockException(where + ": fallback '" + name + "' not found on " + userClass.getName()
                    + "; expected a method " + expected);
        }
        // the most specific class first (doWithMethods walks from the class to its superclasses); within
        // one class, the variant that is told the failure, so the choice never depends on reflection order
        Class<?> declaring = candidates.get(0).getDeclaringClass();
        Method fallback = candidates.stream()
            .filter(candidate -> candidate.getDeclaringClass() == declaring)
            .max(java.util.Comparator.comparingInt(Method::getParameterCount))
            .orElseThrow();
        if (!ClassUtils.isAssignable(method.getReturnType(), fallback.getReturnType())) {
            throw new InvalidDistributedLockException(where + ": fallback " + fallback.getName() + " returns "
                    + fallback.getReturnType().getName() + ", which is not a " + method.getReturnType().getName());
        }
        return fallback;
    }

    private static boolean fallbackParametersMatch(Method candidateMethod, Method intercepted) {
        if (SuspendingFunctions.isSuspending(intercepted) != SuspendingFunctions.isSuspending(candidateMethod)) {
            return false; // a suspend function falls back to a suspend function, a plain one to a plain one
        }
        Class<?>[] candidate = SuspendingFunctions.declaredParameters(candidateMethod);
        Class<?>[] method = SuspendingFunctions.declaredParameters(intercepted);
        if (candidate.length == method.length) {
            return Arrays.equals(candidate, method);
        }
        return candidate.length == method.length + 1
                && Arrays.equals(Arrays.copyOf(candidate, method.length), method)
                && candidate[method.length].isAssignableFrom(LockAcquisitionException.class);
    }

    private static String parameterList(Method method) {
        return String.join(", ", Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList());
    }
}
