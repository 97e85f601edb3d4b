package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.OnLockFailure;

import org.jspecify.annotations.Nullable;
import org.springframework.core.ReactiveAdapter;
import org.springframework.expression.Expression;

/**
 * One {@code @DistributedLock} method's attributes, parsed and checked once at startup: durations are
 * durations, the key is a parsed expression and the fallback a resolved method.
 * @param method the method as declared on the target class (for messages and SpEL)
 * @param description {@code SimpleClassName.method} for messages
 * @param name the static part of every logical key
 * @param key the parsed SpEL key, or null when the name alone is the key
 * @param waitTime null for {@code leasehold.wait-time}
 * @param leaseTime null for a watchdog-renewed lease
 * @param fallback null for none
 * @param fallbackTakesException whether the fallback has a trailing {@code LockAcquisitionException} parameter
 * @param resultKind when the lock is released: on return, or when the returned stage or publisher ends
 * @param reactiveAdapter for {@link ResultKind#REACTIVE}: adapts the return type to a Reactive Streams publisher
 * @param keysWithoutExpression the one logical key when there is no key expression, else null
 * @param arguments the argument index of each variable a key may name ({@code #id}, {@code #p0}, {@code #a0})
 * @param skipValue what a skipped call returns ({@code onFailure = SKIP})
 * @param holdAtLeast null for none: how long after the grant the key stays taken, even when released sooner
 */
record LockAttribute(Method method, String description, String name, @Nullable Expression key,
        @Nullable Duration waitTime, @Nullable Duration leaseTime, LockMode mode, OnLockFailure onFailure,
        @Nullable Method fallback, boolean fallbackTakesException, ResultKind resultKind,
        @Nullable ReactiveAdapter reactiveAdapter, @Nullable List<String> keysWithoutExpression,
        Map<String, Integer> arguments, Supplier<@Nullable Object> skipValue, @Nullable Duration holdAtLeast) {

    /** When the lock of a call is released. */
    enum ResultKind {
        /** When the method returns or throws (or, inside a transaction, when that completes). */
        PLAIN,
        /** When the returned {@code CompletionStage} completes. */
        COMPLETION_STAGE,
        /** When the returned publisher completes, errors or is cancelled; acquired on subscription. */
        REACTIVE
    }
}
