package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Kotlin {@code suspend} functions under {@code @DistributedLock}. Spring AOP (6.1+) calls a suspend function
 * as a {@code Mono} (a {@code Flux} when it returns a {@code Flow}) and awaits what the advice returns in the
 * caller's coroutine, as it does for {@code @Transactional}; so the lock is the one around a publisher, and
 * the caller's coroutine is suspended, not its thread, while it waits. Needs
 * {@code kotlinx-coroutines-reactor} (which {@code leasehold-kotlin} brings); no Kotlin type is named here,
 * so this class loads in any application.
 */
final class SuspendingFunctions {

    /** What Spring AOP checks before it turns suspend calls into publishers. */
    static final boolean SUPPORTED = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt",
            SuspendingFunctions.class.getClassLoader());

    private SuspendingFunctions() {
    }

    static boolean isSuspending(Method method) {
        return KotlinDetector.isSuspendingFunction(method);
    }

    /** What Spring AOP makes of a call of the function: a {@code Flux} for a {@code Flow}, else a {@code Mono}. */
    static ReactiveAdapter adapter(Method method) {
        boolean flow = "kotlinx.coroutines.flow.Flow".equals(new MethodParameter(method, -1).getParameterType().getName());
        // Reactor is on the class path with kotlinx-coroutines-reactor (checked before): both are registered
        return Objects.requireNonNull(ReactiveAdapterRegistry.getSharedInstance().getAdapter(flow ? Flux.class : Mono.class));
    }

    /** A suspend function's parameters without the trailing {@code Continuation} the compiler added. */
    static Class<?>[] declaredParameters(Method method) {
        Class<?>[] types = method.getParameterTypes();
        return isSuspending(method) ? Arrays.copyOf(types, types.length - 1) : types;
    }

    /**
     * Calls a suspend fallback with the intercepted call's arguments, and the failure when it takes one, as
     * a publisher in the caller's coroutine context (as Spring AOP calls the method itself).
     */
    static @Nullable Object invokeFallback(Method fallback, @Nullable Object target, Object[] arguments, @Nullable Object failure)
            throws Throwable {
        Object[] withFailure = arguments;
        if (failure != null) {
            withFailure = Arrays.copyOf(arguments, arguments.length + 1);
            withFailure[arguments.length - 1] = failure;
            withFailure[arguments.length] = arguments[arguments.length - 1]; // the continuation stays last
        }
        return AopUtils.invokeJoinpointUsingReflection(target, fallback, withFailure);
    }
}
