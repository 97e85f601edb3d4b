package dev.leasehold.aot;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockMode;
import dev.leasehold.OnLockFailure;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a native image needs from Leasehold beyond what Spring's AOT processing finds by itself: the Lua
 * scripts (class-path resources read at startup), and {@link DistributedLock} as it is read at run time
 * (its attributes, and the JDK proxy Spring uses for a synthesized merged annotation). Per-bean hints
 * (fallback methods, key argument types) come from {@code DistributedLockBeanRegistrationAotProcessor}.
 * Registered in {@code META-INF/spring/aot.factories}.
 */
public class LeaseholdRuntimeHints implements RuntimeHintsRegistrar {

    /** The protocol's scripts, loaded by {@code LockScript}. */
    public static final String LUA_SCRIPTS = "dev/leasehold/engine/redis/*.lua";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(LUA_SCRIPTS);
        hints.reflection().registerType(DistributedLock.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(LockMode.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(OnLockFailure.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.proxies().registerJdkProxy(DistributedLock.class);
    }
}
