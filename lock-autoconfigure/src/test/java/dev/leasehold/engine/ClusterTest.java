package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine on a real three-master Redis Cluster: every script stays in one slot, wake-ups cross nodes. */
@Timeout(90)
class ClusterTest {

    private static TestRedisCluster cluster;

    private static final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeAll
    static void startCluster() {
        cluster = TestRedisCluster.start(3);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (AutoCloseable resource : resources) {
            resource.close();
        }
        cluster.close();
    }

    private static DefaultLockEngine engine() {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()));
        factory.afterPropertiesSet();
        factory.start();
        LettuceLockServer server = new LettuceLockServer(factory, "lock:");
        DefaultLockEngine engine = new DefaultLockEngine(server, EngineFixture.fastSettings(), null);
        resources.add(0, factory::destroy);
        resources.add(0, server);
        resources.add(0, engine);
        return engine;
    }

    @Test
    void locksOnKeysAllOverTheClusterWorkInEveryMode() {
        DefaultLockEngine first = engine();
        DefaultLockEngine second = engine();
        Set<Integer> nodesUsed = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String key = "order:" + i;
            try (LockHandle handle = first.lock(key, Duration.ZERO)) {
                assertThat(second.tryLock(key, Duration.ZERO, null)).isEmpty();
                nodesUsed.add(nodeHolding("lock:{" + key + "}"));
            }
            try (LockHandle reader = first.tryLock(key, LockMode.READ, Duration.ZERO, null).orElseThrow();
                    LockHandle otherReader = second.tryLock(key, LockMode.READ, Duration.ZERO, null).orElseThrow()) {
                assertThat(otherReader.fencingToken()).isGreaterThan(reader.fencingToken());
            }
            assertThat(second.isLocked(key)).isFalse();
        }
        assertThat(nodesUsed).as("keys spread over every master").hasSize(3);
    }

    @Test
    void keysThatWouldBreakTheHashTagWorkInEveryMode() {
        DefaultLockEngine first = engine();
        DefaultLockEngine second = engine();
        List<String> keys = List.of("}", "}{", "}x", "}}", "\\", "\\}x", "{", "{}", "a}b", "{x}", "\u00e9}\u65e5",
                "}" + "k".repeat(999));
        for (String key : keys) {
            for (LockMode mode : LockMode.values()) {
                try (LockHandle handle = first.tryLock(key, mode, Duration.ZERO, null).orElseThrow()) {
                    assertThat(handle.isHeld()).isTrue();
                    assertThat(second.isLocked(key)).as("'%s' held in %s", key, mode).isTrue();
                    assertThat(second.tryLock(key, LockMode.WRITE, Duration.ZERO, null)).as("'%s'", key).isEmpty();
                }
                assertThat(second.isLocked(key)).isFalse();
            }
        }
        // the escape keeps different keys apart: "}x" and "\}x" are two locks
        try (LockHandle escaped = first.lock("}x", Duration.ZERO); LockHandle other = second.lock("\\}x", Duration.ZERO)) {
            assertThat(escaped.isHeld() && other.isHeld()).isTrue();
        }
    }

    @Test
    void aWaiterIsWokenByAReleaseOnAnotherNode() throws Exception {
        DefaultLockEngine holder = engine();
        DefaultLockEngine waiter = engine();
        for (String key : List.of("a", "b", "c", "d", "e", "f")) {
            LockHandle held = holder.lock(key, Duration.ZERO);
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                try (LockHandle handle = waiter.lock(key, Duration.ofSeconds(20))) {
                    return System.nanoTime();
                }
            });
            Await.until(Duration.ofSeconds(10), "the waiter sleeps until a release", () -> waiter.waitingCount() == 1);
            long releasedAt = System.nanoTime();
            held.close();
            long handoffMillis = (acquiredAt.get(20, TimeUnit.SECONDS) - releasedAt) / 1_000_000;
            // woken by the message, or else at the holder's 30 s lease end: the bound separates the two with
            // room for a loaded machine
            assertThat(handoffMillis).as("hand-off of '%s'", key).isLessThan(10_000);
        }
    }

    private static int nodeHolding(String redisKey) {
        for (int i = 0; i < cluster.nodes().size(); i++) {
            TestRedisServer node = cluster.nodes().get(i);
            String slot = node.command("CLUSTER", "KEYSLOT", redisKey);
            if (!node.command("CLUSTER", "COUNTKEYSINSLOT", slot).equals("0")) {
                return i;
            }
        }
        throw new AssertionError(redisKey + " is on no node");
    }
}
