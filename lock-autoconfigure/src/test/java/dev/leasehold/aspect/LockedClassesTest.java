package dev.leasehold.aspect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.leasehold.DistributedLock;

import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;

/**
 * The advisor's class filter: a class passes when a method it has, overrides or implements carries the annotation,
 * whatever type of its hierarchy declares it; every other bean is spared the per-method search.
 */
class LockedClassesTest {

    interface Orders {
        @DistributedLock(key = "#id")
        void ship(String id);
    }

    interface Catalogue {
        void list();
    }

    static class Annotated {
        @DistributedLock
        void run() {
        }
    }

    static class Plain implements Catalogue {
        @Override
        public void list() {
        }
    }

    static class ImplementsAnnotatedInterface implements Orders {
        @Override
        public void ship(String id) {
        }
    }

    static class InheritsAnnotatedMethod extends Annotated {
    }

    static class InheritsInterfaceFromSuperclass extends ImplementsAnnotatedInterface {
    }

    abstract static class GivesTheMethod {
        public void ship(String id) {
        }
    }

    /** The method comes from a superclass that does not know the interface: a class proxy calls it. */
    static class InterfaceMetBySuperclass extends GivesTheMethod implements Orders {
    }

    @Test
    void passesOnlyClassesWithAnAnnotatedMethodSomewhereInTheirHierarchy() {
        assertThat(LockedClasses.mayHaveLockedMethods(Annotated.class)).isTrue();
        assertThat(LockedClasses.mayHaveLockedMethods(ImplementsAnnotatedInterface.class)).isTrue();
        assertThat(LockedClasses.mayHaveLockedMethods(InheritsAnnotatedMethod.class)).isTrue();
        assertThat(LockedClasses.mayHaveLockedMethods(InheritsInterfaceFromSuperclass.class)).isTrue();
        assertThat(LockedClasses.mayHaveLockedMethods(InterfaceMetBySuperclass.class)).isTrue();

        assertThat(LockedClasses.mayHaveLockedMethods(Plain.class)).isFalse();
        assertThat(LockedClasses.mayHaveLockedMethods(String.class)).isFalse();
        assertThat(LockedClasses.mayHaveLockedMethods(Object.class)).isFalse();
    }

    @Test
    void aClassProxyIsJudgedByTheClassItProxies() {
        ProxyFactory factory = new ProxyFactory(new InheritsAnnotatedMethod());
        factory.setProxyTargetClass(true);
        Class<?> proxyClass = factory.getProxy().getClass();
        assertThat(proxyClass).isNotEqualTo(InheritsAnnotatedMethod.class);
        assertThat(LockedClasses.mayHaveLockedMethods(proxyClass)).isTrue();

        ProxyFactory plain = new ProxyFactory(new Plain());
        plain.setProxyTargetClass(true);
        assertThat(LockedClasses.mayHaveLockedMethods(plain.getProxy().getClass())).isFalse();
    }

    @Test
    void agreesWithTheAttributeSourceOnEveryMethod() {
        for (Class<?> type : new Class<?>[] {Annotated.class, Plain.class, ImplementsAnnotatedInterface.class,
                InheritsAnnotatedMethod.class, InheritsInterfaceFromSuperclass.class, InterfaceMetBySuperclass.class}) {
            boolean anyFound = false;
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (var method : c.getDeclaredMethods()) {
                    anyFound |= LockAttributeSource.findAnnotation(method, type) != null;
                }
            }
            // the filter may only say "maybe" where the search finds something; it must never hide a find
            if (anyFound) {
                assertThat(LockedClasses.mayHaveLockedMethods(type)).as(type.getSimpleName()).isTrue();
            }
        }
    }
}
