package dev.leasehold.aot;

import java.lang.reflect.Method;
import java.util.List;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.aspect.DistributedLockBeanRegistrationAotProcessor;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.javapoet.ClassName;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/** The hints a native image needs, as {@code aot.factories} registers them. */
class LeaseholdRuntimeHintsTest {

    @Test
    void theRegistrarIsFoundThroughAotFactoriesAndCoversScriptsAnnotationAndItsProxy() {
        RuntimeHints hints = new RuntimeHints();
        List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
            .load(RuntimeHintsRegistrar.class);
        assertThat(registrars).hasAtLeastOneElementOfType(LeaseholdRuntimeHints.class);
        registrars.forEach(registrar -> registrar.registerHints(hints, getClass().getClassLoader()));

        for (String script : List.of("acquire_exclusive", "acquire_shared", "release_exclusive", "release_shared",
                "renew_exclusive", "renew_shared", "is_locked", "queue", "fence", "owner", "withdraw", "reserve_fences", "look")) {
            assertThat(RuntimeHintsPredicates.resource().forResource("dev/leasehold/engine/redis/" + script + ".lua"))
                .as(script).accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.proxies().forInterfaces(DistributedLock.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DistributedLock.class, "holdAtLeast"))
            .accepts(hints);
    }

    @Test
    void annotatedBeansGetTheirMethodsFallbacksAndKeyTypesRegistered() {
        DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
        beanFactory.registerBeanDefinition("orders", new RootBeanDefinition(Orders.class));
        beanFactory.registerBeanDefinition("plain", new RootBeanDefinition(Plain.class));
        DistributedLockBeanRegistrationAotProcessor processor = new DistributedLockBeanRegistrationAotProcessor();
        assertThat(processor.processAheadOfTime(RegisteredBean.of(beanFactory, "plain"))).isNull();

        BeanRegistrationAotContribution contribution = processor.processAheadOfTime(RegisteredBean.of(beanFactory, "orders"));
        DefaultGenerationContext generationContext = new DefaultGenerationContext(
                new ClassNameGenerator(ClassName.get(Orders.class)), new InMemoryGeneratedFiles());
        contribution.applyTo(generationContext, null);
        RuntimeHints hints = generationContext.getRuntimeHints();

        Method ship = ReflectionUtils.findMethod(Orders.class, "ship", Order.class);
        Method fallback = ReflectionUtils.findMethod(Orders.class, "later", Order.class, LockAcquisitionException.class);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ship)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(fallback)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Order.class, "id")).accepts(hints);
    }

    public record Order(String id) {
    }

    public static class Orders {

        @DistributedLock(name = "order", key = "#order.id", fallback = "later")
        public String ship(Order order) {
            return "shipped";
        }

        String later(Order order, LockAcquisitionException failure) {
            return "later";
        }
    }

    public static class Plain {

        public void work() {
        }
    }
}
