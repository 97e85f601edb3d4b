package dev.leasehold.aspect;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.time.temporal.TemporalAccessor;
import java.util.Date;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.leasehold.LockKeyException;

import org.jspecify.annotations.Nullable;
import org.springframework.util.ReflectionUtils;

/**
 * Turns a key value into text, the same way every time, so that equal values lock the same key and
 * different values of one type never collide:
 * <ul>
 * <li>text as it is; numbers in decimal ({@code BigDecimal} in plain notation); booleans, characters,
 * {@code UUID}s and {@code java.time} values by {@code toString()}; a {@code Date} as its {@code Instant}</li>
 * <li>an enum constant by its {@code name()}</li>
 * <li>a record as {@code (component,component,...)} with each component rendered by these rules, and
 * {@code \ , ( )} inside a component escaped with {@code \}, so {@code ("a,b","c")} and
 * {@code ("a","b,c")} differ</li>
 * <li>an {@code Optional} as its value</li>
 * <li>any other object by its {@code toString()}, only if its class overrides it</li>
 * </ul>
 * Top-level text is not escaped, so {@code name = "order", key = "#id"} with id {@code "42"} is the lock
 * {@code "order:42"} that {@code LockService} takes by that name. Null, blank, an empty {@code Optional} and
 * an object with no {@code toString()} of its own (its identity hash would make every call a different lock)
 * are refused with {@link LockKeyException}.
 */
final class LockKeyRenderer {

    private static final ConcurrentHashMap<Class<?>, Boolean> OWN_TO_STRING = new ConcurrentHashMap<>();

    private static final ClassValue<Method[]> RECORD_ACCESSORS = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> type) {
            RecordComponent[] components = type.getRecordComponents();
            Method[] accessors = new Method[components.length];
            for (int i = 0; i < components.length; i++) {
                accessors[i] = components[i].getAccessor();
                ReflectionUtils.makeAccessible(accessors[i]);
            }
            return accessors;
        }
    };

    private LockKeyRenderer() {
    }

    /** @param attribute names the method and expression in the exception message */
    static String render(@Nullable Object value, LockAttribute attribute) {
        String text = renderValue(value, attribute, false);
        if (text.isBlank()) {
            throw new LockKeyException(where(attribute) + " evaluated to blank text; the method was not run");
        }
        return text;
    }

    private static String where(LockAttribute attribute) {
        return LockKeyEvaluator.where(attribute);
    }

    private static String renderValue(@Nullable Object value, LockAttribute attribute, boolean nested) {
        if (value == null) {
            throw new LockKeyException(where(attribute) + " evaluated to null" + (nested ? " inside a record" : "")
                    + "; the method was not run");
        }
        if (value instanceof CharSequence text) {
            return nested ? escape(text.toString()) : text.toString();
        }
        if (value instanceof BigDecimal decimal) {
            return decimal.toPlainString();
        }
        if (value instanceof Number || value instanceof Boolean || value instanceof Character || value instanceof UUID
                || value instanceof TemporalAccessor) {
            return nested ? escape(value.toString()) : value.toString();
        }
        if (value instanceof Enum<?> constant) {
            return constant.name();
        }
        if (value instanceof Date date) {
            // not toInstant(): java.sql.Date and Time refuse it
            return java.time.Instant.ofEpochMilli(date.getTime()).toString();
        }
        if (value instanceof Optional<?> optional) {
            return renderValue(optional.orElseThrow(() -> new LockKeyException(where(attribute)
                    + " evaluated to an empty Optional; the method was not run")), attribute, nested);
        }
        if (value instanceof Record record) {
            return renderRecord(record, attribute);
        }
        if (!hasOwnToString(value.getClass())) {
            throw new LockKeyException(where(attribute) + " evaluated to a " + value.getClass().getName()
                    + ", which has no toString() of its own (its identity would make every call a different lock); "
                    + "lock on one of its fields instead, e.g. #order.id");
        }
        return nested ? escape(value.toString()) : value.toString();
    }

    private static String renderRecord(Record record, LockAttribute attribute) {
        StringBuilder text = new StringBuilder("(");
        Method[] accessors = RECORD_ACCESSORS.get(record.getClass());
        for (int i = 0; i < accessors.length; i++) {
            if (i > 0) {
                text.append(',');
            }
            text.append(renderValue(ReflectionUtils.invokeMethod(accessors[i], record), attribute, true));
        }
        return text.append(')').toString();
    }

    private static String escape(String text) {
        StringBuilder escaped = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' || c == ',' || c == '(' || c == ')') {
                if (escaped == null) {
                    escaped = new StringBuilder(text.length() + 8).append(text, 0, i);
                }
                escaped.append('\\');
            }
            if (escaped != null) {
                escaped.append(c);
            }
        }
        return escaped != null ? escaped.toString() : text;
    }

    private static boolean hasOwnToString(Class<?> type) {
        return OWN_TO_STRING.computeIfAbsent(type, t -> {
            Method toString = ReflectionUtils.findMethod(t, "toString");
            return toString != null && toString.getDeclaringClass() != Object.class;
        });
    }
}
