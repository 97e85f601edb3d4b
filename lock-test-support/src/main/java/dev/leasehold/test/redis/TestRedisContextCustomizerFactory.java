package dev.leasehold.test.redis;

import java.net.URI;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Registered in {@code META-INF/spring.factories}: gives the context of a test class that uses
 * {@link TestRedisExtension} a {@code DataRedisConnectionDetails} bean for the run's shared Redis server.
 * Spring Boot's Redis auto-configuration then uses it instead of {@code spring.data.redis.*} (the
 * service-connection convention). Other test classes are left alone.
 */
class TestRedisContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass, List<ContextConfigurationAttributes> attributes) {
        return usesTestRedis(testClass) ? new TestRedisContextCustomizer() : null;
    }

    /** {@code @TestRedis} or {@code @ExtendWith(TestRedisExtension.class)}, on the class or an enclosing one. */
    private static boolean usesTestRedis(Class<?> testClass) {
        for (Class<?> type = testClass; type != null; type = TestContextAnnotationUtils.searchEnclosingClass(type)
                ? type.getEnclosingClass() : null) {
            boolean extended = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).stream(ExtendWith.class)
                .anyMatch(extendWith -> Arrays.asList(extendWith.getClassArray("value")).contains(TestRedisExtension.class));
            if (extended) {
                return true;
            }
        }
        return false;
    }

    /** The same for every test class: the server is the run's one, so cached contexts stay valid. */
    private static final class TestRedisContextCustomizer implements ContextCustomizer {

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
            DataRedisConnectionDetails details = connectionDetails(TestRedisExtension.SharedTestRedis.server());
            if (context.getBeanFactory() instanceof BeanDefinitionRegistry registry) {
                RootBeanDefinition definition = new RootBeanDefinition(DataRedisConnectionDetails.class, () -> details);
                registry.registerBeanDefinition("leaseholdTestRedisConnectionDetails", definition);
            }
            else {
                context.getBeanFactory().registerSingleton("leaseholdTestRedisConnectionDetails", details);
            }
        }

        @Override
        public boolean equals(Object other) {
            return other != null && other.getClass() == getClass();
        }

        @Override
        public int hashCode() {
            return getClass().hashCode();
        }
    }

    /** Host and port, and the user, password and database of a {@code LEASEHOLD_TEST_REDIS_URL}. */
    static DataRedisConnectionDetails connectionDetails(TestRedisServer server) {
        URI url = URI.create(server.url());
        String userInfo = url.getUserInfo();
        String user = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = colon < 0 ? null : userInfo.substring(0, colon);
            password = colon < 0 ? userInfo : userInfo.substring(colon + 1);
            user = user != null && user.isEmpty() ? null : user;
        }
        String path = url.getPath();
        int database = path == null || path.length() <= 1 ? 0 : Integer.parseInt(path.substring(1));
        return new TestRedisConnectionDetails(server.host(), server.port(), database, user, password);
    }

    private record TestRedisConnectionDetails(String host, int port, int database, @Nullable String user,
            @Nullable String password)
            implements DataRedisConnectionDetails {

        @Override
        public @Nullable String getUsername() {
            return user;
        }

        @Override
        public @Nullable String getPassword() {
            return password;
        }

        @Override
        public Standalone getStandalone() {
            return Standalone.of(host, port, database);
        }
    }
}
