package dev.leasehold.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.autoconfigure.LeaseholdProperties;
import dev.leasehold.engine.quorum.QuorumNodes;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.ClassPathBeanDefinitionScanner;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.FileSystemResource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The YAML examples are loaded as Spring Boot loads application.yml and bound, strictly, to the properties they
 * set (an unknown or misspelt property, or a value of the wrong type, fails); the annotated examples are started
 * in an application on a real Redis, where Leasehold checks every @DistributedLock method at startup.
 */
class ExamplesLoadTest {

    @Test
    void everyYamlExampleBindsToThePropertiesItSets() {
        List<Snippets.Snippet> yaml = Snippets.all(Guide.of(Fixture.repository())).stream()
            .filter(snippet -> snippet.language().startsWith("y") && snippet.source() != null).toList();
        assertThat(yaml).hasSizeGreaterThanOrEqualTo(2);
        for (Snippets.Snippet snippet : yaml) {
            Binder binder = binder(snippet.source());
            assertThatCode(() -> {
                LeaseholdProperties leasehold = bind(binder, "leasehold", LeaseholdProperties.class);
                bind(binder, "spring.data.redis", DataRedisProperties.class);
                // what quorum mode checks when it starts (without connecting: the example's hosts are not ours)
                leasehold.getQuorum().getNodes().forEach(QuorumNodes::parse);
                assertThat(leasehold.getQuorum().getNodes().size()).as("quorum nodes").isNotIn(1, 2);
            }).as(snippet.where() + " (" + snippet.source() + ")").doesNotThrowAnyException();
            assertThat(keys(snippet.source())).as(snippet.source() + " sets only leasehold.* and spring.data.redis.*")
                .allMatch(key -> key.startsWith("leasehold.") || key.startsWith("spring.data.redis."));
        }
    }

    @Test
    void aMisspeltPropertyFailsToBind() {
        Binder binder = new Binder(ConfigurationPropertySources.from(new org.springframework.core.env.MapPropertySource("x",
                Map.of("leasehold.lease-tiem", "30s"))));
        assertThatCode(() -> bind(binder, "leasehold", LeaseholdProperties.class)).hasMessageContaining("leasehold");
    }

    @Test
    void theAnnotatedExamplesStartInAnApplicationWithTheQuickStartsProperties() {
        try (TestRedisServer redis = TestRedisServers.start()) {
            Map<String, Object> properties = new HashMap<>(flat("docs/src/test/resources/snippets/quickstart.yml"));
            properties.put("spring.data.redis.host", redis.host());
            properties.put("spring.data.redis.port", redis.port());
            new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        LeaseholdAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class))
                .withPropertyValues(properties.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                .withInitializer(context -> new ClassPathBeanDefinitionScanner((org.springframework.beans.factory.support.BeanDefinitionRegistry) context)
                    .scan("dev.leasehold.docs.snippets.quickstart", "dev.leasehold.docs.snippets.annotation",
                            "dev.leasehold.docs.snippets.scheduling"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(LockService.class);
                    for (String name : List.of("bookingService", "orderService", "payments", "exports")) {
                        assertThat(AopUtils.isAopProxy(context.getBean(name))).as(name + " is intercepted").isTrue();
                    }
                    assertThat(context.getBean(LockService.class).withLock("docs:example", java.time.Duration.ofSeconds(2), () -> "locked"))
                        .isEqualTo("locked");
                });
        }
    }

    private static <T> T bind(Binder binder, String prefix, Class<T> type) {
        BindResult<T> result = binder.bind(prefix, org.springframework.boot.context.properties.bind.Bindable.of(type),
                new NoUnboundElementsBindHandler(org.springframework.boot.context.properties.bind.BindHandler.DEFAULT));
        return result.orElseGet(() -> org.springframework.beans.BeanUtils.instantiateClass(type));
    }

    private static Binder binder(String file) {
        return new Binder(ConfigurationPropertySources.from(load(file)));
    }

    private static List<PropertySource<?>> load(String file) {
        try {
            return new YamlPropertySourceLoader().load(file, new FileSystemResource(Fixture.repository().resolve(file)));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static List<String> keys(String file) {
        return load(file).stream().flatMap(source -> List.of(((EnumerablePropertySource<?>) source).getPropertyNames()).stream())
            .map(key -> key.replaceAll("\\[\\d+]$", "")).toList();
    }

    private static Map<String, Object> flat(String file) {
        Map<String, Object> flat = new HashMap<>();
        load(file).forEach(source -> {
            for (String key : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
                flat.put(key, String.valueOf(source.getProperty(key)));
            }
        });
        return flat;
    }
}
