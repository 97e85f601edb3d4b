package dev.leasehold.aspect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;
import dev.leasehold.LockKeyException;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;
import dev.leasehold.OnLockFailure;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class DistributedLockAspectTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return AspectContexts.on(redis.server()).withUserConfiguration(Beans.class);
    }

    static boolean lockedInRedis(TestRedisServer server, String logicalKey) {
        return "1".equals(server.command("EXISTS", "lock:{" + logicalKey + "}"));
    }

    /** Another client holds the key, as a second JVM would. */
    private static void heldElsewhere(String logicalKey) {
        redis.server().command("SET", "lock:{" + logicalKey + "}", "another-client", "PX", "20000");
    }

    @Test
    void theMethodRunsHoldingNamePlusKeyAndReleasesOnReturn() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(AopUtils.isCglibProxy(orders)).isTrue();
            assertThat(orders.ship(42)).as("locked in Redis while the method ran").isTrue();
            assertThat(lockedInRedis(redis.server(), "order:42")).as("released after return").isFalse();
            assertThat(LockContext.current()).isEmpty();
        });
    }

    @Test
    void theLockIsReleasedWhenTheMethodThrows() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThatThrownBy(() -> orders.fail("x")).isInstanceOf(IllegalStateException.class).hasMessage("boom x");
            assertThat(lockedInRedis(redis.server(), "failing:x")).isFalse();
            assertThat(LockContext.current()).isEmpty();
        });
    }

    @Test
    void keyExpressionsSeeParametersByNameAndPositionTheRootAndBeans() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(orders.defaultName("a")).isEqualTo(Orders.class.getName() + ".defaultName:a");
            assertThat(orders.noKey()).isEqualTo(Orders.class.getName() + ".noKey");
            assertThat(orders.byPosition("x", "y")).isEqualTo("pos:x-y");
            assertThat(orders.byRoot("z")).isEqualTo("root:byRoot/z/orders-bean");
            assertThat(orders.byBean(7)).isEqualTo("bean:tenant-1/7");
        });
    }

    @Test
    void valuesRenderStablyAndDistinctValuesNeverShareAKey() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(orders.by(LockMode.WRITE)).isEqualTo("value:WRITE");
            assertThat(orders.by(42L)).isEqualTo("value:42");
            assertThat(orders.by(new java.math.BigDecimal("1E+3"))).isEqualTo("value:1000");
            UUID id = UUID.randomUUID();
            assertThat(orders.by(id)).isEqualTo("value:" + id);
            assertThat(orders.by("a:b")).as("text as it is: the same lock as LockService's 'value:a:b'")
                .isEqualTo("value:a:b");
            assertThat(orders.by(new Pair("a,b", "c"))).isEqualTo("value:(a\\,b,c)");
            assertThat(orders.by(new Pair("a", "b,c"))).isEqualTo("value:(a,b\\,c)");
            assertThat(orders.by(Optional.of(5))).isEqualTo("value:5");
        });
    }

    @Test
    void badKeyValuesAreRefusedAndTheMethodNeverRuns() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThatThrownBy(() -> orders.by(null)).isInstanceOf(LockKeyException.class)
                .hasMessageContaining("#value").hasMessageContaining("Orders.by").hasMessageContaining("null");
            assertThatThrownBy(() -> orders.by("  ")).isInstanceOf(LockKeyException.class).hasMessageContaining("blank");
            assertThatThrownBy(() -> orders.by(new Object())).isInstanceOf(LockKeyException.class)
                .hasMessageContaining("no toString()");
            assertThatThrownBy(() -> orders.by(Optional.empty())).isInstanceOf(LockKeyException.class);
            assertThatThrownBy(() -> orders.byNested(null)).isInstanceOf(LockKeyException.class)
                .hasMessageContaining("could not be evaluated");
            assertThatThrownBy(() -> orders.by("x".repeat(2000))).isInstanceOf(LockKeyException.class)
                .hasMessageContaining("Orders.by").hasMessageContaining("1000");
            assertThatThrownBy(() -> orders.multi(List.of())).isInstanceOf(LockKeyException.class)
                .hasMessageContaining("empty");
            assertThatThrownBy(() -> orders.multi(java.util.Arrays.asList("a", null))).isInstanceOf(LockKeyException.class);
            assertThat(orders.runs()).as("the method body never ran").isZero();
        });
    }

    @Test
    void aCollectionLocksEveryElementSortedAndDistinctAndReleasesThemAll() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(orders.multi(List.of("b", "a", "c", "a"))).containsExactly("multi:a", "multi:b", "multi:c");
            assertThat(orders.multiArray(new int[] { 3, 1, 2 })).containsExactly("multi:1", "multi:2", "multi:3");
            for (String key : List.of("multi:a", "multi:b", "multi:c", "multi:1", "multi:2", "multi:3")) {
                assertThat(lockedInRedis(redis.server(), key)).as(key).isFalse();
            }
        });
    }

    @Test
    void aMultiLockIsAllOrNothingAndNamesTheKeyThatWasHeld() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            heldElsewhere("multi:b");
            assertThatThrownBy(() -> orders.multi(List.of("a", "b", "c")))
                .isInstanceOfSatisfying(LockAcquisitionException.class, ex -> assertThat(ex.getKey()).isEqualTo("multi:b"));
            assertThat(lockedInRedis(redis.server(), "multi:a")).as("what it took was given back").isFalse();
            assertThat(lockedInRedis(redis.server(), "multi:c")).isFalse();
            assertThat(orders.runs()).isZero();
        });
    }

    @Test
    void overlappingMultiLocksInOppositeOrderDoNotDeadlock() throws Exception {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    runs.add(pool.submit(() -> orders.multi(List.of("x", "y"))));
                    runs.add(pool.submit(() -> orders.multi(List.of("y", "x"))));
                }
                for (Future<?> run : runs) {
                    run.get(10, TimeUnit.SECONDS);
                }
            }
            finally {
                pool.shutdownNow();
            }
        });
    }

    @Test
    void callsOnOneKeyNeverOverlapAcrossThreads() throws Exception {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            runConcurrently(Executors.newFixedThreadPool(8), orders, 8 * 25);
            assertThat(orders.maxInside()).isEqualTo(1);
            assertThat(orders.inside()).isZero();
        });
    }

    @Test
    void theAspectRunsOnVirtualThreads() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21,
                "virtual threads need a Java 21+ runtime; this one is " + Runtime.version());
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
            runConcurrently(virtual, orders, 200);
            assertThat(orders.maxInside()).isEqualTo(1);
            assertThat(orders.virtualThreadRuns()).isEqualTo(200);
        });
    }

    private static void runConcurrently(ExecutorService pool, Orders orders, int calls) throws Exception {
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                runs.add(pool.submit(() -> orders.exclusive("shared")));
            }
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }

    @Test
    void readersShareAKeyAndAWriterExcludesThem() throws Exception {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            CountDownLatch bothReading = new CountDownLatch(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<Boolean> first = pool.submit(() -> orders.read("doc", bothReading));
                Future<Boolean> second = pool.submit(() -> orders.read("doc", bothReading));
                assertThat(first.get(10, TimeUnit.SECONDS)).as("both readers were inside at once").isTrue();
                assertThat(second.get(10, TimeUnit.SECONDS)).isTrue();

                CountDownLatch reading = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                Future<?> reader = pool.submit(() -> {
                    orders.readUntil("doc", reading, release);
                    return null;
                });
                assertThat(reading.await(5, TimeUnit.SECONDS)).isTrue();
                assertThatThrownBy(() -> orders.write("doc")).isInstanceOf(LockAcquisitionException.class);
                release.countDown();
                reader.get(5, TimeUnit.SECONDS);
                assertThat(orders.write("doc")).isTrue();
            }
            finally {
                pool.shutdownNow();
            }
        });
    }

    @Test
    void throwNamesTheKeyTheMethodAndTheWait() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            heldElsewhere("order:7");
            assertThatThrownBy(() -> orders.shipNow(7)).isInstanceOfSatisfying(LockAcquisitionException.class,
                    ex -> assertThat(ex.getKey()).isEqualTo("order:7"))
                .hasMessageContaining("'order:7'").hasMessageContaining("Orders.shipNow").hasMessageContaining("PT0S");
            assertThat(orders.runs()).isZero();
        });
    }

    @Test
    void skipDoesNotRunTheMethodAndReturnsNothingOfTheRightType() {
        runner().run(context -> {
            Skipping skipping = context.getBean(Skipping.class);
            heldElsewhere("busy");
            assertThat(skipping.text()).isNull();
            assertThat(skipping.optional()).isEmpty();
            assertThat(skipping.list()).isEmpty();
            assertThat(skipping.set()).isEmpty();
            assertThat(skipping.map()).isEmpty();
            assertThat(skipping.number()).isZero();
            assertThat(skipping.flag()).isFalse();
            skipping.nothing();
            assertThat(skipping.runs()).isZero();
        });
    }

    @Test
    void aFallbackRunsInsteadWithTheSameArgumentsAndOptionallyTheFailure() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            heldElsewhere("fallback:1");
            assertThat(orders.withFallback("1")).isEqualTo("busy 1");
            assertThat(orders.withFallbackSeeingFailure("1")).isEqualTo("busy 1 (fallback:1)");
            assertThat(orders.withOverloadedFallback("1")).as("of two overloads, the one told the failure")
                .isEqualTo("busy 1 (fallback:1)");
            assertThat(orders.runs()).isZero();
        });
    }

    @Test
    void nestedCallsAndLockServiceReenterTheSameLockWithTheSameToken() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            long[] tokens = orders.reenter("r1");
            assertThat(tokens[0]).isPositive();
            assertThat(tokens[1]).as("a nested @DistributedLock call").isEqualTo(tokens[0]);
            assertThat(tokens[2]).as("LockService inside the method").isEqualTo(tokens[0]);
            assertThat(tokens[3]).as("still held after the nested calls returned").isEqualTo(1);
            assertThat(lockedInRedis(redis.server(), "re:r1")).isFalse();
        });
    }

    @Test
    void placeholdersInDurationsResolveFromTheEnvironment() {
        runner().withPropertyValues("orders.busy-wait=0").run(context -> {
            Orders orders = context.getBean(Orders.class);
            heldElsewhere("placeholder");
            long started = System.nanoTime();
            assertThatThrownBy(orders::withPlaceholderWait).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("PT0S");
            // one try, not the default 5 s wait
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
        });
    }

    @Test
    void anAnnotationOnAnInterfaceMethodWorksOnClassAndInterfaceProxies() {
        for (String proxyTargetClass : List.of("true", "false")) {
            runner().withPropertyValues("spring.aop.proxy-target-class=" + proxyTargetClass).run(context -> {
                Shipping shipping = context.getBean(Shipping.class);
                assertThat(AopUtils.isJdkDynamicProxy(shipping)).isEqualTo(proxyTargetClass.equals("false"));
                assertThat(shipping.ship(5)).as("proxy-target-class=" + proxyTargetClass).isTrue();
                assertThat(lockedInRedis(redis.server(), "shipping:5")).isFalse();
            });
        }
    }

    @Test
    void anInterfaceAnnotationOnAMethodASuperclassImplementsIsHonoured() {
        // a class proxy calls Base.ship, which knows nothing of the interface that carries the annotation
        for (String proxyTargetClass : List.of("true", "false")) {
            runner().withPropertyValues("spring.aop.proxy-target-class=" + proxyTargetClass)
                .withBean("inheritedShipping", InheritedShipping.class)
                .run(context -> {
                    Shipping shipping = context.getBean("inheritedShipping", Shipping.class);
                    assertThat(shipping.ship(6)).as("proxy-target-class=" + proxyTargetClass).isTrue();
                });
        }
    }

    @Test
    void theClassAnnotationWinsOverTheInterfaceOne() {
        runner().withBean("ownShipping", OwnShipping.class).run(context -> {
            assertThat(context.getBean("ownShipping", Shipping.class).ship(8)).isTrue();
        });
    }

    @Test
    void aFallbackWinsOverSkipAndDoesNotSeeAnOuterCallsLock() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            heldElsewhere("fallback:2");
            assertThat(orders.skipOrFallback("2")).isEqualTo("busy 2");
            assertThat(orders.fallbackInsideOuterLock("2")).as("LockContext inside the fallback").isEqualTo("none");
        });
    }

    @Test
    void theRootTargetClassAndDatesRender() {
        runner().run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(orders.byTargetClass()).isEqualTo("target:Orders");
            assertThat(orders.by(java.sql.Date.valueOf("2026-11-23"))).startsWith("value:2026-11-2");
            assertThat(orders.by(new java.util.Date(0))).isEqualTo("value:1970-01-01T00:00:00Z");
        });
    }

    @Test
    void disabledRunsAnnotatedMethodsWithoutLocks() {
        runner().withPropertyValues("leasehold.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class)
                .doesNotHaveBean(DistributedLockAdvisor.class);
            Orders orders = context.getBean(Orders.class);
            assertThat(AopUtils.isAopProxy(orders)).isFalse();
            assertThat(orders.ship(1)).isFalse();
        });
    }

    public record Pair(String left, String right) {
    }

    public static class Nested {

        public String getId() {
            return "n";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {

        @Bean
        Orders orders(ObjectProvider<LockService> lockService, Inner inner) {
            return new Orders(lockService, inner);
        }

        @Bean
        Inner inner() {
            return new Inner();
        }

        @Bean
        Skipping skipping() {
            return new Skipping();
        }

        @Bean
        Shipping shipping() {
            return new ShippingService();
        }

        @Bean
        TenantKeys keySource() {
            return new TenantKeys();
        }
    }

    public static class TenantKeys {

        public String prefix() {
            return "tenant-1/";
        }
    }

    public interface Shipping {

        @DistributedLock(name = "shipping", key = "#orderId")
        boolean ship(long orderId);
    }

    static class ShippingService implements Shipping {

        @Override
        public boolean ship(long orderId) {
            return lockedInRedis(redis.server(), "shipping:" + orderId);
        }
    }

    public static class ShippingBase {

        public boolean ship(long orderId) {
            return lockedInRedis(redis.server(), "shipping:" + orderId);
        }
    }

    public static class InheritedShipping extends ShippingBase implements Shipping {
    }

    public static class OwnShipping implements Shipping {

        @Override
        @DistributedLock(name = "own-shipping", key = "#orderId")
        public boolean ship(long orderId) {
            return lockedInRedis(redis.server(), "own-shipping:" + orderId)
                    && !lockedInRedis(redis.server(), "shipping:" + orderId);
        }
    }

    public static class Inner {

        @DistributedLock(name = "fallback", key = "#id", waitTime = "0", fallback = "reportContext")
        public String busyWithContext(String id) {
            return "ran";
        }

        String reportContext(String id) {
            return LockContext.current().map(LockHandle::key).orElse("none");
        }

        @DistributedLock(name = "re", key = "#id")
        public long token(String id) {
            return LockContext.current().orElseThrow().fencingToken();
        }
    }

    public static class Orders {

        final AtomicInteger runs = new AtomicInteger();

        final AtomicInteger inside = new AtomicInteger();

        final AtomicInteger maxInside = new AtomicInteger();

        final AtomicInteger virtualThreadRuns = new AtomicInteger();

        private final ObjectProvider<LockService> lockService;

        private final Inner inner;

        public final String tag = "orders-bean";

        Orders(ObjectProvider<LockService> lockService, Inner inner) {
            this.lockService = lockService;
            this.inner = inner;
        }

        public String getTag() {
            return tag;
        }

        public int runs() {
            return runs.get();
        }

        public int inside() {
            return inside.get();
        }

        public int maxInside() {
            return maxInside.get();
        }

        public int virtualThreadRuns() {
            return virtualThreadRuns.get();
        }

        private String currentKey() {
            runs.incrementAndGet();
            return LockContext.current().orElseThrow().key();
        }

        @DistributedLock(name = "order", key = "#orderId")
        public boolean ship(long orderId) {
            return LockContext.current().map(LockHandle::isHeld).orElse(false)
                    && lockedInRedis(redis.server(), "order:" + orderId);
        }

        @DistributedLock(name = "order", key = "#orderId", waitTime = "0")
        public void shipNow(long orderId) {
            runs.incrementAndGet();
        }

        @DistributedLock(name = "failing", key = "#id")
        public void fail(String id) {
            throw new IllegalStateException((lockedInRedis(redis.server(), "failing:" + id) ? "boom " : "unlocked ") + id);
        }

        @DistributedLock(key = "#p0")
        public String defaultName(String id) {
            return currentKey();
        }

        @DistributedLock
        public String noKey() {
            return currentKey();
        }

        @DistributedLock(name = "pos", key = "#a0 + '-' + #p1")
        public String byPosition(String first, String second) {
            return currentKey();
        }

        @DistributedLock(name = "root", key = "#root.methodName + '/' + #root.args[0] + '/' + #root.target.tag")
        public String byRoot(String value) {
            return currentKey();
        }

        @DistributedLock(name = "bean", key = "@keySource.prefix() + #id")
        public String byBean(int id) {
            return currentKey();
        }

        @DistributedLock(name = "value", key = "#value")
        public String by(Object value) {
            return currentKey();
        }

        @DistributedLock(name = "nested", key = "#nested.id")
        public String byNested(Nested nested) {
            return currentKey();
        }

        @DistributedLock(name = "multi", key = "#ids")
        public List<String> multi(Collection<?> ids) {
            runs.incrementAndGet();
            return LockContext.currentLocks().stream().map(LockHandle::key).toList();
        }

        @DistributedLock(name = "multi", key = "#ids")
        public List<String> multiArray(int[] ids) {
            return LockContext.currentLocks().stream().map(LockHandle::key).toList();
        }

        @DistributedLock(name = "exclusive", key = "#key", waitTime = "20s")
        public void exclusive(String key) {
            int now = inside.incrementAndGet();
            maxInside.accumulateAndGet(now, Math::max);
            if (Thread.currentThread().toString().startsWith("VirtualThread")) {
                virtualThreadRuns.incrementAndGet();
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            inside.decrementAndGet();
        }

        @DistributedLock(name = "doc", key = "#id", mode = LockMode.READ)
        public boolean read(String id, CountDownLatch bothReading) throws InterruptedException {
            bothReading.countDown();
            return bothReading.await(5, TimeUnit.SECONDS);
        }

        @DistributedLock(name = "doc", key = "#id", mode = LockMode.READ)
        public void readUntil(String id, CountDownLatch reading, CountDownLatch release) throws InterruptedException {
            reading.countDown();
            release.await(5, TimeUnit.SECONDS);
        }

        @DistributedLock(name = "doc", key = "#id", mode = LockMode.WRITE, waitTime = "0")
        public boolean write(String id) {
            return true;
        }

        @DistributedLock(name = "fallback", key = "#id", waitTime = "0", fallback = "busy")
        public String withFallback(String id) {
            runs.incrementAndGet();
            return "ran " + id;
        }

        @DistributedLock(name = "fallback", key = "#id", waitTime = "0", fallback = "busySeeing")
        public String withFallbackSeeingFailure(String id) {
            runs.incrementAndGet();
            return "ran " + id;
        }

        String busy(String id) {
            return "busy " + id;
        }

        @DistributedLock(name = "fallback", key = "#id", waitTime = "0", fallback = "busy", onFailure = OnLockFailure.SKIP)
        public String skipOrFallback(String id) {
            runs.incrementAndGet();
            return "ran " + id;
        }

        @DistributedLock(name = "outer", key = "#id")
        public String fallbackInsideOuterLock(String id) {
            return inner.busyWithContext(id);
        }

        @DistributedLock(name = "target", key = "#root.targetClass.simpleName")
        public String byTargetClass() {
            return currentKey();
        }

        private String busySeeing(String id, LockAcquisitionException failure) {
            return "busy " + id + " (" + failure.getKey() + ")";
        }

        @DistributedLock(name = "fallback", key = "#id", waitTime = "0", fallback = "busyOverloaded")
        public String withOverloadedFallback(String id) {
            runs.incrementAndGet();
            return "ran " + id;
        }

        String busyOverloaded(String id) {
            return "busy " + id;
        }

        String busyOverloaded(String id, LockAcquisitionException failure) {
            return "busy " + id + " (" + failure.getKey() + ")";
        }

        @DistributedLock(name = "re", key = "#id")
        public long[] reenter(String id) {
            LockHandle outer = LockContext.current().orElseThrow();
            long nested = inner.token(id);
            long viaService;
            try (LockHandle again = lockService.getObject().lock("re:" + id, Duration.ZERO)) {
                viaService = again.fencingToken();
            }
            return new long[] { outer.fencingToken(), nested, viaService,
                    outer.isHeld() && lockedInRedis(redis.server(), "re:" + id) ? 1 : 0 };
        }

        @DistributedLock(name = "placeholder", waitTime = "${orders.busy-wait:5s}")
        public void withPlaceholderWait() {
            runs.incrementAndGet();
        }
    }

    public static class Skipping {

        final AtomicInteger runs = new AtomicInteger();

        public int runs() {
            return runs.get();
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public String text() {
            runs.incrementAndGet();
            return "ran";
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public Optional<String> optional() {
            runs.incrementAndGet();
            return Optional.of("ran");
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public List<String> list() {
            runs.incrementAndGet();
            return List.of("ran");
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public Set<String> set() {
            runs.incrementAndGet();
            return Set.of("ran");
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public Map<String, String> map() {
            runs.incrementAndGet();
            return Map.of("ran", "ran");
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public int number() {
            runs.incrementAndGet();
            return 1;
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public boolean flag() {
            runs.incrementAndGet();
            return true;
        }

        @DistributedLock(name = "busy", waitTime = "0", onFailure = OnLockFailure.SKIP)
        public void nothing() {
            runs.incrementAndGet();
        }
    }
}
