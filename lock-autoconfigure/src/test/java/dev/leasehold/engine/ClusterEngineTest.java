package dev.leasehold.engine;

import java.util.ArrayList;
import java.util.List;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** A real three-master Redis Cluster for the engine's Cluster tests (one per test class), and what they share. */
@Timeout(90)
abstract class ClusterEngineTest {

    static TestRedisCluster cluster;

    static final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeAll
    static void startCluster() {
        cluster = TestRedisCluster.start(3);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (AutoCloseable resource : resources) {
            resource.close();
        }
        if (cluster != null) { // null when the start was aborted (a shared LEASEHOLD_TEST_REDIS_URL)
            cluster.close();
        }
    }

    static final List<String> lostKeys = new java.util.concurrent.CopyOnWriteArrayList<>();

    static DefaultLockEngine engine() {
        return engine(EngineFixture.fastSettings());
    }

    static DefaultLockEngine engine(LockEngineSettings settings) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()));
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        return engine(new LettuceLockServer(factory, "lock:"), settings);
    }

    /** A Jedis connection factory on the Cluster, closed after the class. */
    static JedisConnectionFactory jedis(JedisClientConfiguration configuration) {
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()),
                configuration);
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        return factory;
    }

    static DefaultLockEngine engine(LockServer server, LockEngineSettings settings) {
        DefaultLockEngine engine = new DefaultLockEngine(server, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                lostKeys.add(handle.key() + ": " + reason);
            }
        });
        resources.add(0, server);
        resources.add(0, engine);
        return engine;
    }

    /** EVALSHA and EVAL calls so far on each master (INFO commandstats). */
    static long[] scriptCallsPerMaster() {
        long[] calls = new long[cluster.nodes().size()];
        for (int i = 0; i < calls.length; i++) {
            String stats = cluster.nodes().get(i).command("INFO", "commandstats");
            for (String line : stats.split("\\r?\\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    calls[i] += Long.parseLong(line.replaceAll("^[^:]+:calls=(\\d+),.*", "$1"));
                }
            }
        }
        return calls;
    }

    /**
     * A renewal every second of a 3 s lease moves the key's expiry about a second later; comparing expiry times (not
     * PTTL, which a renewal only resets to 3000) cannot miss one: a PTTL read just after a renewal left a window of a
     * few ms after each later renewal in which "PTTL went up" could be seen, and polling could miss all of them.
     */
    static final long RENEWAL_MOVES_EXPIRY_MILLIS = 300;

    /** When the key expires by the local clock (now + PTTL); a key without one counts as expired now. */
    static long expiresAtMillis(TestRedisServer node, String redisKey) {
        long now = System.currentTimeMillis();
        return now + Math.max(0, Long.parseLong(node.command("PTTL", redisKey)));
    }

    static int nodeHolding(String redisKey) {
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
