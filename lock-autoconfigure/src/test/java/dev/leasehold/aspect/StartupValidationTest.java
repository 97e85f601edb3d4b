package dev.leasehold.aspect;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/** A mistake in an annotation fails the application at startup, naming the class, method and attribute. */
@Timeout(60)
class StartupValidationTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static void startingWith(Class<?> bean, ContextConsumer<AssertableApplicationContext> check) {
        AspectContexts.on(redis.server()).withBean(bean).run(check);
    }

    private static ContextConsumer<AssertableApplicationContext> failsWith(Class<?> bean, String... fragments) {
        return context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            StringBuilder messages = new StringBuilder();
            for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
                messages.append(cause.getMessage()).append('\n');
                if (cause instanceof InvalidDistributedLockException invalid) {
                    messages.append(invalid.getAction()).append('\n'); // what the failure analysis prints
                }
            }
            assertThat(messages.toString()).contains(bean.getName()).contains(fragments);
        };
    }

    @Test
    void aWaitTimeThatIsNoDuration() {
        startingWith(BadWait.class, failsWith(BadWait.class, "work", "waitTime 'banana'", "is not a duration"));
    }

    @Test
    void aNegativeWaitTime() {
        startingWith(NegativeWait.class, failsWith(NegativeWait.class, "work", "waitTime '-1s'", "zero or positive"));
    }

    @Test
    void aZeroLeaseTime() {
        startingWith(ZeroLease.class, failsWith(ZeroLease.class, "work", "leaseTime '0'", "must be positive"));
    }

    @Test
    void aPlaceholderWithNoValue() {
        startingWith(MissingPlaceholder.class,
                failsWith(MissingPlaceholder.class, "work", "waitTime '${no.such.property}'", "cannot be resolved"));
    }

    @Test
    void aKeyThatIsNoExpression() {
        startingWith(BadSpel.class, failsWith(BadSpel.class, "work", "key '#id +'", "not a valid SpEL expression"));
    }

    @Test
    void aKeyNamingNoParameter() {
        startingWith(UnknownVariable.class, failsWith(UnknownVariable.class, "work", "#orderId", "no parameter", "[id]"));
    }

    @Test
    void anUnknownFallback() {
        startingWith(UnknownFallback.class, failsWith(UnknownFallback.class, "work", "fallback 'nowhere' not found"));
    }

    @Test
    void aFallbackWithOtherParameters() {
        startingWith(FallbackWithOtherParameters.class,
                failsWith(FallbackWithOtherParameters.class, "work", "fallback 'other' not found", "other(String)"));
    }

    @Test
    void aFallbackReturningAnotherType() {
        startingWith(FallbackReturningAnotherType.class,
                failsWith(FallbackReturningAnotherType.class, "work", "fallback other returns java.lang.Integer"));
    }

    @Test
    void skipOnAReturnTypeWithNoEmptyValue() {
        startingWith(SkipWithoutEmptyValue.class,
                failsWith(SkipWithoutEmptyValue.class, "work", "onFailure = SKIP cannot make an empty"));
    }

    @Test
    void anAnnotatedMethodNoProxyCanIntercept() {
        startingWith(PrivateMethod.class, failsWith(PrivateMethod.class, "work", "private", "never take its lock"));
        startingWith(FinalMethod.class, failsWith(FinalMethod.class, "work", "final", "never take its lock"));
        startingWith(StaticMethod.class, failsWith(StaticMethod.class, "work", "static", "never take its lock"));
    }

    @Test
    void annotatedMethodsWithoutAnyLockService() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class))
            .withBean(Valid.class)
            .run(failsWith(Valid.class, "no LockService", "spring.data.redis", "leasehold.enabled=false"));
    }

    @Test
    void aValidBeanStarts() {
        startingWith(Valid.class, context -> assertThat(context).hasNotFailed());
    }

    public static class BadWait {

        @DistributedLock(waitTime = "banana")
        public void work() {
        }
    }

    public static class NegativeWait {

        @DistributedLock(waitTime = "-1s")
        public void work() {
        }
    }

    public static class ZeroLease {

        @DistributedLock(leaseTime = "0")
        public void work() {
        }
    }

    public static class MissingPlaceholder {

        @DistributedLock(waitTime = "${no.such.property}")
        public void work() {
        }
    }

    public static class BadSpel {

        @DistributedLock(key = "#id +")
        public void work(String id) {
        }
    }

    public static class UnknownVariable {

        @DistributedLock(key = "#orderId")
        public void work(String id) {
        }
    }

    public static class UnknownFallback {

        @DistributedLock(fallback = "nowhere")
        public void work(String id) {
        }
    }

    public static class FallbackWithOtherParameters {

        @DistributedLock(fallback = "other")
        public void work(String id) {
        }

        void other(long id) {
        }
    }

    public static class FallbackReturningAnotherType {

        @DistributedLock(fallback = "other")
        public String work(String id) {
            return id;
        }

        Integer other(String id, LockAcquisitionException failure) {
            return 1;
        }
    }

    public static class SkipWithoutEmptyValue {

        @DistributedLock(onFailure = dev.leasehold.OnLockFailure.SKIP)
        public Fixed work() {
            return new Fixed(1);
        }
    }

    /** A collection with no no-argument constructor: nothing can make an empty one. */
    public static class Fixed extends java.util.ArrayList<String> {

        public Fixed(int size) {
            super(size);
        }
    }

    public static class PrivateMethod {

        @DistributedLock
        private void work() {
        }
    }

    public static class FinalMethod {

        @DistributedLock
        public final void work() {
        }
    }

    public static class StaticMethod {

        @DistributedLock
        public static void work() {
        }
    }

    public static class Valid {

        @DistributedLock(name = "valid", key = "#id", waitTime = "${valid.wait:1s}", leaseTime = "PT10S",
                fallback = "busy")
        public String work(String id) {
            return id;
        }

        String busy(String id, LockAcquisitionException failure) {
            return "busy";
        }
    }
}
