package dev.leasehold.benchmarks.jmh;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What {@code @DistributedLock} itself costs per call: attribute lookup, SpEL key, proxy and bookkeeping,
 * without the lock's round trips. Both benchmarks lock through the same {@link LockService}, one that
 * grants every key at once in the JVM ({@link GrantingLockService}, not a lock: it isolates the annotation
 * layer from Redis), so {@code annotatedCall - lockedByHand} is the interception cost. {@code directCall}
 * is the method with no lock at all, for scale.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class InterceptionCostBenchmark {

    private AnnotationConfigApplicationContext context;

    private Orders proxied;

    private Orders plain;

    private LockService locks;

    private long id;

    @Setup(Level.Trial)
    public void start() {
        context = new AnnotationConfigApplicationContext(Application.class);
        proxied = context.getBean(Orders.class);
        locks = context.getBean(LockService.class);
        plain = new Orders();
    }

    /** {@code @DistributedLock(name = "order", key = "#id")} through its Spring proxy. */
    @Benchmark
    public long annotatedCall() {
        return proxied.ship(++id);
    }

    /** The same lock taken by hand around the same method: the key built, tryLock, close. */
    @Benchmark
    public long lockedByHand() {
        long orderId = ++id;
        try (LockHandle handle = locks.tryLock("order:" + orderId, Duration.ofSeconds(5), null).orElseThrow()) {
            return plain.ship(orderId);
        }
    }

    /** The method alone. */
    @Benchmark
    public long directCall() {
        return plain.ship(++id);
    }

    @TearDown(Level.Trial)
    public void stop() {
        context.close();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ AopAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class })
    static class Application {

        @Bean
        LockService grantingLockService() {
            return new GrantingLockService();
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    public static class Orders {

        @DistributedLock(name = "order", key = "#id")
        public long ship(long id) {
            return id * 31;
        }
    }

    /** Grants every key at once without any I/O; only for measuring what surrounds a lock. */
    static final class GrantingLockService implements LockService {

        private static final LockHandle GRANTED = new LockHandle() {
            @Override
            public String key() {
                return "granted";
            }

            @Override
            public long fencingToken() {
                return 1;
            }

            @Override
            public boolean isHeld() {
                return true;
            }

            @Override
            public void close() {
            }
        };

        @Override
        public Optional<LockHandle> tryLock(String key, Duration waitTime, Duration leaseTime) {
            return Optional.of(GRANTED);
        }

        @Override
        public LockHandle lock(String key, Duration waitTime) {
            return GRANTED;
        }

        @Override
        public <T> T withLock(String key, Duration waitTime, Supplier<T> action) {
            return action.get();
        }

        @Override
        public boolean isLocked(String key) {
            return false;
        }
    }
}
