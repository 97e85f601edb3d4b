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
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.test.redis.TestRedisCluster;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
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
        if (cluster != null) { // null when the start was aborted (a shared LEASEHOLD_TEST_REDIS_URL)
            cluster.close();
        }
    }

    private static final List<String> lostKeys = new java.util.concurrent.CopyOnWriteArrayList<>();

    private static DefaultLockEngine engine() {
        return engine(EngineFixture.fastSettings());
    }

    private static DefaultLockEngine engine(LockEngineSettings settings) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()));
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        return engine(new LettuceLockServer(factory, "lock:"), settings);
    }

    private static DefaultLockEngine engine(LockServer server, LockEngineSettings settings) {
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
            // the waiting instance's own channel, '<key>:released:<instance id>', in the key's slot
            String channel = "lock:{" + key + "}:released";
            TestRedisServer owner = cluster.nodes().get(nodeHolding("lock:{" + key + "}"));
            if (Integer.parseInt(owner.version().split("\\.")[0]) >= 7) {
                // Redis 7: a sharded subscription on the node that owns the key's slot, not a cluster-wide channel
                Await.until(Duration.ofSeconds(10), "a sharded subscription on the slot's node",
                        () -> owner.command("PUBSUB", "SHARDCHANNELS", channel + "*").contains(channel));
                for (TestRedisServer node : cluster.nodes()) {
                    assertThat(node.command("PUBSUB", "CHANNELS", channel + "*")).as("no cluster-wide channel")
                        .doesNotContain(channel);
                }
            }
            else {
                // Redis 6.2 has no sharded pub/sub: a cluster-wide channel on one node, a release published to all
                Await.until(Duration.ofSeconds(10), "a cluster-wide subscription", () -> cluster.nodes().stream()
                    .anyMatch(node -> node.command("PUBSUB", "CHANNELS", channel + "*").contains(channel)));
            }
            long releasedAt = System.nanoTime();
            held.close();
            long handoffMillis = (acquiredAt.get(20, TimeUnit.SECONDS) - releasedAt) / 1_000_000;
            // woken by the message, or else at the holder's 30 s lease end: the bound separates the two with
            // room for a loaded machine
            assertThat(handoffMillis).as("hand-off of '%s'", key).isLessThan(10_000);
        }
    }

    @Test
    void aHeldLockWhoseSlotMigratesIsStillRenewedAndReleased() {
        // renewed every second; a redirected renewal (ASK, MOVED, then NOSCRIPT on the new node) has time to finish
        DefaultLockEngine holder = engine(EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(3))
            .withRedisTimeout(Duration.ofSeconds(2)));
        DefaultLockEngine other = engine(EngineFixture.fastSettings());
        LockHandle held = holder.lock("migrating", Duration.ZERO);
        String lockKey = "lock:{migrating}";
        int from = nodeHolding(lockKey);
        int to = (from + 1) % cluster.nodes().size();
        TestRedisServer source = cluster.nodes().get(from);
        TestRedisServer target = cluster.nodes().get(to);
        String slot = source.command("CLUSTER", "KEYSLOT", lockKey);
        String sourceId = source.command("CLUSTER", "MYID");
        String targetId = target.command("CLUSTER", "MYID");

        target.command("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId);
        source.command("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
        long expiryBefore = expiresAtMillis(source, lockKey);
        Await.until(Duration.ofSeconds(10), "a renewal while MIGRATING",
                () -> expiresAtMillis(source, lockKey) > expiryBefore + RENEWAL_MOVES_EXPIRY_MILLIS);
        List<String> keys = List.of(source.command("CLUSTER", "GETKEYSINSLOT", slot, "100").replaceAll("[\\[\\]\\s]", "").split(","));
        List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), String.valueOf(target.port()), "", "0", "5000", "KEYS"));
        migrate.addAll(keys);
        assertThat(source.command(migrate.toArray(String[]::new))).isEqualTo("OK");
        for (TestRedisServer node : cluster.nodes()) {
            node.command("CLUSTER", "SETSLOT", slot, "NODE", targetId);
        }

        // the lock lives on the new node now, is renewed there, and nobody else can take it
        long expiryMigrated = expiresAtMillis(target, lockKey);
        Await.until(Duration.ofSeconds(10), "a renewal on the new node",
                () -> expiresAtMillis(target, lockKey) > expiryMigrated + RENEWAL_MOVES_EXPIRY_MILLIS);
        assertThat(other.tryLock("migrating", Duration.ZERO, null)).isEmpty();
        assertThat(held.isHeld()).as("%s / %s / %s", holder.heldLockDetails(), lostKeys, target.command("PTTL", lockKey)).isTrue();
        held.close(); // no MOVED or ASK reaches the caller
        assertThat(target.command("EXISTS", lockKey)).isEqualTo("0");
        assertThat(other.tryLock("migrating", Duration.ZERO, null)).isPresent().get().satisfies(LockHandle::close);
        assertThat(lostKeys).isEmpty();
    }

    /**
     * Held locks spread over all 16,384 slots: a batch per slot was a script call per lock (798 per master per tick
     * for 1,000 locks on three masters). Lettuce knows which master serves a slot, so a batch holds one master's
     * locks: 1,500 locks (about 500 per master) cost a call per master per tick.
     */
    @Test
    void aTickRenewsLocksOfEverySlotInACallPerMaster() {
        Duration lease = Duration.ofMillis(1500); // a tick every 500 ms
        assertATickCosts(engine(EngineFixture.fastSettings().withLeaseTime(lease)), lease, 1_500, 1);
    }

    /**
     * Through a RedisTemplate on Jedis (JedisCluster routes a script by its one declared key) the client's view of
     * the Cluster is not asked: a batch goes to the master of its first lock and comes back for the locks another
     * master serves, a round per master it touches.
     */
    @Test
    void onJedisATickRenewsLocksOfEverySlotInARoundPerMaster() {
        Duration lease = Duration.ofMillis(1500);
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()));
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        DefaultLockEngine engine = engine(new RedisTemplateLockServer(factory, "lock:"),
                EngineFixture.fastSettings().withLeaseTime(lease));
        assertATickCosts(engine, lease, 300, 1);
    }

    /**
     * A master that stops answering (paused, not failed over) loses its own locks, never those of the masters that
     * answer: its batch fails on its own (a batch holds one master's locks), and a batch that fails goes again per slot.
     */
    @Test
    void aMasterThatStopsAnsweringLosesOnlyItsOwnLocks() {
        Duration lease = Duration.ofMillis(4000);
        DefaultLockEngine holder = engine(EngineFixture.fastSettings().withLeaseTime(lease)
            .withRedisTimeout(Duration.ofSeconds(1)));
        List<LockHandle> handles = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            handles.add(holder.lock("stalled-" + i, Duration.ZERO));
        }
        // one master stops answering
        TestRedisServer stalled = cluster.nodes().get(nodeHolding("lock:{stalled-0}"));
        List<LockHandle> elsewhere = handles.stream()
            .filter(handle -> cluster.nodes().get(nodeHolding("lock:{" + handle.key() + "}")) != stalled)
            .toList();
        // the others keep serving their slots while one master is down (by default a Cluster stops them all)
        cluster.nodes().forEach(node -> node.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
        stalled.pause();
        try {
            long since = System.nanoTime();
            Await.until(Duration.ofSeconds(20), "more than a lease", () -> System.nanoTime() - since > 6_000_000_000L);
            assertThat(elsewhere).as("locks of the masters that answer").hasSizeGreaterThan(30).allMatch(LockHandle::isHeld);
        }
        finally {
            stalled.resume();
            // every node sees the resumed master as healthy again (no "fail" or "fail?" flag) before the Cluster
            // requires full coverage again, else it stops serving the next tests
            Await.until(Duration.ofSeconds(30), "the resumed master seen healthy", () -> cluster.nodes().stream()
                .noneMatch(node -> node.command("CLUSTER", "NODES").contains("fail")));
            cluster.nodes().forEach(node -> node.command("CONFIG", "SET", "cluster-require-full-coverage", "yes"));
            Await.until(Duration.ofSeconds(30), "the Cluster whole again", () -> cluster.nodes().stream()
                .allMatch(node -> node.command("CLUSTER", "INFO").contains("cluster_state:ok")));
            lostKeys.clear(); // the stalled master's locks were lost, as they should be
        }
        handles.forEach(LockHandle::close);
    }

    private static void assertATickCosts(DefaultLockEngine holder, Duration lease, int locks, int callsPerTick) {
        List<LockHandle> handles = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            handles.add(holder.lock("spread-" + i, Duration.ZERO));
        }
        long[] before = scriptCallsPerMaster();
        long from = System.nanoTime();
        Await.until(Duration.ofSeconds(10), "three leases", () -> System.nanoTime() - from > lease.multipliedBy(3).toNanos());
        long[] after = scriptCallsPerMaster();
        long ticks = (System.nanoTime() - from) / lease.dividedBy(3).toNanos() + 1;
        long[] calls = new long[after.length];
        java.util.Arrays.setAll(calls, node -> after[node] - before[node]);
        System.out.println("script calls per master in " + ticks + " ticks: " + java.util.Arrays.toString(calls));
        for (int node = 0; node < after.length; node++) {
            // per slot that was a call per lock and tick
            assertThat(calls[node]).as("script calls on master %d in %d ticks", node, ticks)
                .isLessThanOrEqualTo(callsPerTick * ticks + 2);
        }
        assertThat(handles).allMatch(LockHandle::isHeld);
        assertThat(lostKeys).isEmpty();
        handles.forEach(LockHandle::close);
    }

    /**
     * While a slot migrates, a batch's node answers -1 for its locks that have left (Redis refuses a key it does not
     * serve: the script sees an error, never a missing key), and they are asked again where they are now: no lock
     * of the slot, nor of any other, is lost.
     */
    @Test
    void manyHeldLocksKeepTheirLeasesWhileOneOfTheirSlotsMigrates() {
        DefaultLockEngine holder = engine(EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(3))
            .withRedisTimeout(Duration.ofSeconds(2)));
        List<LockHandle> handles = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            handles.add(holder.lock("around-" + i, Duration.ZERO));
        }
        int slot = ClusterSlotHashUtil.calculateSlot("lock:{around-0}");
        List<String> inSlot = new ArrayList<>();
        for (int i = 0; inSlot.size() < 10; i++) {
            String key = "same-slot-" + i;
            if (ClusterSlotHashUtil.calculateSlot("lock:{" + key + "}") == slot) {
                inSlot.add(key);
                handles.add(holder.lock(key, Duration.ZERO));
            }
        }
        int from = nodeHolding("lock:{around-0}");
        TestRedisServer source = cluster.nodes().get(from);
        TestRedisServer target = cluster.nodes().get((from + 1) % cluster.nodes().size());
        String slotText = String.valueOf(slot);
        String sourceId = source.command("CLUSTER", "MYID");
        String targetId = target.command("CLUSTER", "MYID");
        target.command("CLUSTER", "SETSLOT", slotText, "IMPORTING", sourceId);
        source.command("CLUSTER", "SETSLOT", slotText, "MIGRATING", targetId);
        List<String> keys = List.of(source.command("CLUSTER", "GETKEYSINSLOT", slotText, "100").replaceAll("[\\[\\]\\s]", "").split(","));
        assertThat(keys).hasSize(11);
        List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), String.valueOf(target.port()), "", "0", "5000", "KEYS"));
        migrate.addAll(keys);
        assertThat(source.command(migrate.toArray(String[]::new))).isEqualTo("OK");
        // the keys are on the target while the slot is still the source's (ASK): longer than a lease (3 s), so the
        // keys expire unless renewals reach them there
        long migratedAt = System.nanoTime();
        Await.until(Duration.ofSeconds(10), "a lease and more in migration", () -> System.nanoTime() - migratedAt > 4_000_000_000L);
        for (TestRedisServer node : cluster.nodes()) {
            node.command("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        }
        for (String key : keys) {
            assertThat(Long.parseLong(target.command("PTTL", key))).as("%s renewed during the migration", key).isPositive();
        }
        long since = System.nanoTime();
        Await.until(Duration.ofSeconds(20), "two leases after the move", () -> System.nanoTime() - since > 6_000_000_000L);
        assertThat(lostKeys).isEmpty();
        assertThat(handles).allMatch(LockHandle::isHeld);
        for (String key : inSlot) {
            assertThat(Long.parseLong(target.command("PTTL", "lock:{" + key + "}"))).as(key).isPositive();
        }
        handles.forEach(LockHandle::close);
    }

    /** EVALSHA and EVAL calls so far on each master (INFO commandstats). */
    private static long[] scriptCallsPerMaster() {
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
    private static final long RENEWAL_MOVES_EXPIRY_MILLIS = 300;

    /** When the key expires by the local clock (now + PTTL); a key without one counts as expired now. */
    private static long expiresAtMillis(TestRedisServer node, String redisKey) {
        long now = System.currentTimeMillis();
        return now + Math.max(0, Long.parseLong(node.command("PTTL", redisKey)));
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
