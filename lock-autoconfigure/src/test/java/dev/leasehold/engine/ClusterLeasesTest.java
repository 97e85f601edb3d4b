package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases on a real three-master Redis Cluster: renewals go in a call (Lettuce) or a round (Jedis) per master, a
 * master that stops answering loses only its own locks, and locks whose slot migrates keep their leases.
 */
class ClusterLeasesTest extends ClusterEngineTest {

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
     * Through a RedisTemplate on Jedis (JedisCluster routes a script by its one declared key): until the stripes have
     * learnt which master serves which slot (within a second), a batch goes to the master of its first lock and
     * comes back for the locks another master serves, a round per master it touches; then a batch per master,
     * which is what a tick costs once they are known.
     */
    @Test
    void onJedisATickRenewsLocksOfEverySlotInARoundPerMaster() {
        Duration lease = Duration.ofMillis(1500);
        RedisTemplateLockServer server = new RedisTemplateLockServer(jedis(JedisClientConfiguration.defaultConfiguration()),
                "lock:");
        DefaultLockEngine engine = engine(server, EngineFixture.fastSettings().withLeaseTime(lease));
        // measured once the masters are known: on a busy machine the first refresh can come later than a second,
        // and the ticks before it cost a round per master they touch (14 calls in 10 ticks seen in CI)
        Await.until(Duration.ofSeconds(10), "the masters known", () -> server.renewalsPerCall() == 3 * 1000);
        assertATickCosts(engine, lease, 300, 1);
    }

    /**
     * A master that stops answering (paused, not failed over) loses its own locks, never those of the masters that
     * answer: its batch fails on its own (a batch holds one master's locks), and a batch that fails goes again per slot.
     */
    @Test
    void aMasterThatStopsAnsweringLosesOnlyItsOwnLocks() {
        assertAStalledMasterLosesOnlyItsOwnLocks(engine(stalledMasterSettings()));
    }

    /**
     * The same on Jedis: before each master had stripes of its own, calls blocked on the stalled master (each up to
     * the client's timeout) held the four shared stripes, and the masters that answered lost their locks too.
     */
    @Test
    void onJedisAMasterThatStopsAnsweringLosesOnlyItsOwnLocks() {
        RedisTemplateLockServer server = new RedisTemplateLockServer(jedis(JedisClientConfiguration.builder()
            .readTimeout(Duration.ofSeconds(4)).connectTimeout(Duration.ofSeconds(4)).build()), "lock:");
        DefaultLockEngine holder = engine(server, stalledMasterSettings());
        // the stripes learn the Cluster's masters off the hot path, within a second
        // (a batch of renewals per master at once, of 1,000 each)
        Await.until(Duration.ofSeconds(10), "the masters known", () -> server.renewalsPerCall() == 3 * 1000);
        assertAStalledMasterLosesOnlyItsOwnLocks(holder);
    }

    private static LockEngineSettings stalledMasterSettings() {
        return EngineFixture.fastSettings().withLeaseTime(Duration.ofMillis(4000)).withRedisTimeout(Duration.ofSeconds(1));
    }

    private void assertAStalledMasterLosesOnlyItsOwnLocks(DefaultLockEngine holder) {
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
        // the application keeps asking for keys of the stalled master meanwhile (each call waits on it)
        Set<Integer> stalledSlots = new HashSet<>();
        handles.stream().filter(handle -> !elsewhere.contains(handle))
            .forEach(handle -> stalledSlots.add(ClusterSlotHashUtil.calculateSlot("lock:{" + handle.key() + "}")));
        List<String> busyKeys = new ArrayList<>();
        for (int i = 0; busyKeys.size() < 8; i++) {
            if (stalledSlots.contains(ClusterSlotHashUtil.calculateSlot("lock:{busy-" + i + "}"))) {
                busyKeys.add("busy-" + i);
            }
        }
        java.util.concurrent.atomic.AtomicBoolean paused = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<Thread> callers = busyKeys.stream().map(key -> new Thread(() -> {
            while (paused.get()) {
                try {
                    holder.tryLock(key, Duration.ZERO, null).ifPresent(LockHandle::close);
                }
                catch (RuntimeException unavailable) {
                    // expected while its master does not answer
                }
            }
        }, "caller of " + key)).toList();
        callers.forEach(Thread::start);
        stalled.pause();
        try {
            long since = System.nanoTime();
            Await.until(Duration.ofSeconds(20), "more than a lease", () -> System.nanoTime() - since > 6_000_000_000L);
            assertThat(elsewhere).as("locks of the masters that answer").hasSizeGreaterThan(30).allMatch(LockHandle::isHeld);
        }
        finally {
            paused.set(false);
            stalled.resume();
            for (Thread caller : callers) {
                try {
                    caller.join(30_000);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
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
        assertHeldLocksKeepTheirLeasesWhileOneOfTheirSlotsMigrates(engine(migrationSettings()));
    }

    /**
     * The same on Jedis, whose stripes per master learn the slot's new master after the move and move the slot to
     * its stripes at a moment when none of its steps is in flight.
     */
    @Test
    void onJedisManyHeldLocksKeepTheirLeasesWhileOneOfTheirSlotsMigrates() {
        assertHeldLocksKeepTheirLeasesWhileOneOfTheirSlotsMigrates(engine(
                new RedisTemplateLockServer(jedis(JedisClientConfiguration.defaultConfiguration()), "lock:"),
                migrationSettings()));
    }

    private static LockEngineSettings migrationSettings() {
        return EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(3)).withRedisTimeout(Duration.ofSeconds(2));
    }

    private static void assertHeldLocksKeepTheirLeasesWhileOneOfTheirSlotsMigrates(DefaultLockEngine holder) {
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
}
