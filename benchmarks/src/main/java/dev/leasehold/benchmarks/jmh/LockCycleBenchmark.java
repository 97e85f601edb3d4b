package dev.leasehold.benchmarks.jmh;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.benchmarks.contenders.Contender;
import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.benchmarks.contenders.LeaseholdContender;
import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
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

/**
 * One uncontended lock+unlock cycle on one thread: Leasehold's {@code LockService} (tryLock, then close)
 * against the floor (SET NX PX, then EVALSHA compare-and-delete). The Redis server is the suite's (its
 * port in {@value JmhRunner#PORT_PROPERTY}) or, when run alone, one started here.
 * <p>
 * A new JMH benchmark is just another class in this package; {@link JmhRunner} runs them all.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class LockCycleBenchmark {

    private TestRedisServer ownServer;

    private Contender leasehold;

    private Contender floor;

    private final Runnable nothing = () -> {
    };

    @Setup(Level.Trial)
    public void start() {
        Redis redis = JmhRunner.suiteRedis();
        if (redis == null) {
            ownServer = TestRedisServers.start();
            redis = new Redis(ownServer.host(), ownServer.port());
        }
        leasehold = new LeaseholdContender(redis);
        floor = new FloorContender(redis);
    }

    @Benchmark
    public boolean leaseholdTryLockClose() throws Exception {
        return leasehold.withLock("jmh-leasehold", LockMode.EXCLUSIVE, Duration.ZERO, nothing);
    }

    @Benchmark
    public boolean floorSetNxEvalsha() throws Exception {
        return floor.withLock("jmh-floor", LockMode.EXCLUSIVE, Duration.ZERO, nothing);
    }

    @TearDown(Level.Trial)
    public void stop() {
        leasehold.close();
        floor.close();
        if (ownServer != null) {
            ownServer.close();
        }
    }
}
