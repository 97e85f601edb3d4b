package dev.leasehold.aspect;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.springframework.core.CollectionFactory;
import org.springframework.core.ResolvableType;

/**
 * What a method with {@code onFailure = SKIP} returns when it is skipped: nothing rather than a made-up
 * value. Null, {@code Optional.empty()}, an empty collection, map, array or stream, the primitive default;
 * for a {@code CompletionStage}, a completed stage of the same rule applied to its element type.
 */
final class SkipValues {

    private SkipValues() {
    }

    /**
     * Makes the value once, so a return type it cannot make (a collection without a public no-argument
     * constructor, say) fails at startup, not on the first busy call in production.
     */
    static Supplier<@Nullable Object> forReturnType(Method method, String where) {
        ResolvableType type = ResolvableType.forMethodReturnType(method);
        try {
            forType(type);
        }
        catch (RuntimeException ex) {
            return () -> {
                throw new IllegalStateException(where + ": onFailure = SKIP cannot make an empty "
                        + type + " (" + ex.getMessage() + "); use a fallback method instead", ex);
            };
        }
        return () -> forType(type);
    }

    private static @Nullable Object forType(ResolvableType type) {
        Class<?> raw = type.resolve(Object.class);
        if (raw.isPrimitive()) {
            return raw == void.class ? null : Array.get(Array.newInstance(raw, 1), 0);
        }
        if (raw == Optional.class) {
            return Optional.empty();
        }
        if (raw == OptionalInt.class) {
            return OptionalInt.empty();
        }
        if (raw == OptionalLong.class) {
            return OptionalLong.empty();
        }
        if (raw == OptionalDouble.class) {
            return OptionalDouble.empty();
        }
        if (raw == Stream.class) {
            return Stream.empty();
        }
        if (raw.isArray()) {
            return Array.newInstance(raw.getComponentType(), 0);
        }
        if (Collection.class.isAssignableFrom(raw)) {
            return CollectionFactory.createCollection(raw, type.asCollection().resolveGeneric(0), 0);
        }
        if (Map.class.isAssignableFrom(raw)) {
            return CollectionFactory.createMap(raw, type.asMap().resolveGeneric(0), 0);
        }
        if (java.util.concurrent.CompletionStage.class.isAssignableFrom(raw)) {
            return CompletableFuture.completedFuture(forType(type.as(java.util.concurrent.CompletionStage.class).getGeneric(0)));
        }
        return null;
    }
}
