package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.RedisTemplateLockServer;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServer.Renewal;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slot in the middle of a migration: some of its keys have moved to the importing master, the others not yet. A
 * renewal batch whose first lock has moved follows the ASK there with ASKING, which Redis applies to every key the
 * script reads: the slot's keys that have not moved read as absent there. They were answered "not owned", and the
 * watchdog reported held locks lost. Now such a lock is asked about on its own, where Redis routes its key.
 */
class ClusterPartialMigrationTest extends ClusterEngineTest {

    @Test
    void onLettuceEveryLockOfAPartlyMovedSlotIsRenewedWhicheverComesFirstInTheBatch() throws Exception {
        assertEveryLockOfAPartlyMovedSlotIsRenewed(lettuceServer(), "lettuce");
    }

    @Test
    void onJedisEveryLockOfAPartlyMovedSlotIsRenewedWhicheverComesFirstInTheBatch() throws Exception {
        LockServer server = new RedisTemplateLockServer(jedis(JedisClientConfiguration.defaultConfiguration()), "lock:");
        resources.add(0, server);
        assertEveryLockOfAPartlyMovedSlotIsRenewed(server, "jedis");
    }

    /** The engine's watchdog over a partly moved slot: no held lock is reported lost, and every key keeps its lease. */
    @Test
    void heldLocksOfAPartlyMovedSlotKeepTheirLeases() {
        assertHeldLocksOfAPartlyMovedSlotKeepTheirLeases(engine(migrationSettings()), "held");
    }

    @Test
    void onJedisHeldLocksOfAPartlyMovedSlotKeepTheirLeases() {
        assertHeldLocksOfAPartlyMovedSlotKeepTheirLeases(engine(new RedisTemplateLockServer(
                jedis(JedisClientConfiguration.defaultConfiguration()), "lock:"), migrationSettings()), "jedis-held");
    }

    @Test
    void onLettuceAReleaseDuringASlotMigrationFreesTheKeyOnceTheSlotIsHandedOver() throws Exception {
        assertReleasesDuringAMigrationFreeTheirKeys(engine(migrationSettings()), engine(migrationSettings()), "release");
    }

    @Test
    void onJedisAReleaseDuringASlotMigrationFreesTheKeyOnceTheSlotIsHandedOver() throws Exception {
        assertReleasesDuringAMigrationFreeTheirKeys(
                engine(new RedisTemplateLockServer(jedis(JedisClientConfiguration.defaultConfiguration()), "lock:"),
                        migrationSettings()),
                engine(new RedisTemplateLockServer(jedis(JedisClientConfiguration.defaultConfiguration()), "lock:"),
                        migrationSettings()), "jedis-release");
    }

    /**
     * While a slot migrates, Redis answers TRYAGAIN to a script whose keys are partly missing (on the source, or on
     * the target under ASKING): the release of any lock of that slot (its queue keys rarely exist) until the slot is
     * handed over. The release was not sent again: "Could not release ...; it will expire", and the key stayed
     * taken for the rest of its lease (3 s here) after close() returned.
     */
    private static void assertReleasesDuringAMigrationFreeTheirKeys(DefaultLockEngine holder, DefaultLockEngine other,
            String prefix) throws Exception {
        List<String> names = namesInOneSlot(prefix, 2);
        LockHandle staying = holder.lock(names.get(0), Duration.ZERO);
        LockHandle moved = holder.lock(names.get(1), Duration.ZERO);
        Migration migration = Migration.start(names.get(0));
        migration.move(List.of(names.get(1)));
        // as redis-cli --cluster reshard does once the slot's keys moved: the slot is the target's on every master
        CompletableFuture<Void> handedOver = CompletableFuture.runAsync(migration::finish,
                CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
        try {
            staying.close();
            moved.close();
        }
        finally {
            handedOver.get(10, TimeUnit.SECONDS);
        }
        for (String name : names) {
            java.util.Optional<LockHandle> taken = other.tryLock(name, Duration.ZERO, null);
            assertThat(taken).as("%s free after its release (its lease would run 3 s)", name).isPresent();
            taken.get().close();
        }
        assertThat(lostKeys).as("locks reported lost").isEmpty();
    }

    private static LockEngineSettings migrationSettings() {
        return EngineFixture.fastSettings().withLeaseTime(Duration.ofSeconds(3)).withRedisTimeout(Duration.ofSeconds(2));
    }

    private static void assertHeldLocksOfAPartlyMovedSlotKeepTheirLeases(DefaultLockEngine holder, String prefix) {
        List<String> names = namesInOneSlot(prefix, 10);
        List<LockHandle> handles = new ArrayList<>();
        for (String name : names) {
            handles.add(holder.lock(name, Duration.ZERO));
        }
        // most of them move: a batch (in the watchdog's own order) then most likely starts with a moved one
        Migration migration = Migration.start(names.get(0));
        try {
            migration.move(names.subList(0, 8));
            long movedAt = System.nanoTime();
            // two leases (3 s) and more in this state: the keys expire unless renewals reach them where they are
            Await.until(Duration.ofSeconds(20), "two leases in mid-migration",
                    () -> System.nanoTime() - movedAt > 7_000_000_000L || !lostKeys.isEmpty());
            assertThat(lostKeys).as("locks reported lost").isEmpty();
            assertThat(handles).allMatch(LockHandle::isHeld);
            for (int i = 0; i < names.size(); i++) {
                assertThat(migration.pttl(names.get(i), i < 8)).as("%s renewed where it is", names.get(i)).isPositive();
            }
        }
        finally {
            migration.finish();
        }
        handles.forEach(LockHandle::close);
    }

    private static void assertEveryLockOfAPartlyMovedSlotIsRenewed(LockServer server, String prefix) throws Exception {
        List<String> names = namesInOneSlot(prefix, 6);
        List<String> moved = names.subList(0, 3);
        List<String> staying = names.subList(3, 6);
        for (String name : names) {
            assertThat(server.acquire(keys(name), LockMode.EXCLUSIVE, "token-" + name, 30_000, 0, name)
                .get(10, TimeUnit.SECONDS).granted()).isTrue();
        }
        Migration migration = Migration.start(names.get(0));
        try {
            migration.move(moved);
            // a batch that starts with a moved lock (its call goes to the importing master with ASKING), and one that
            // starts with a lock that has not moved; a lock of the slot that is gone is still answered as gone
            for (List<String> order : List.of(concat(moved, staying), concat(staying, moved))) {
                List<Renewal> renewals = new ArrayList<>();
                for (String name : order) {
                    renewals.add(new Renewal(keys(name), LockMode.EXCLUSIVE, "token-" + name, 60_000));
                }
                String gone = namesInOneSlot(prefix + "-gone", 1).get(0);
                renewals.add(new Renewal(keys(gone), LockMode.EXCLUSIVE, "token-" + gone, 60_000));
                List<CompletableFuture<Boolean>> answers = server.renewAll(renewals);
                for (int i = 0; i < order.size(); i++) {
                    assertThat(answers.get(i).get(10, TimeUnit.SECONDS)).as("%s renewed (batch %s)", order.get(i), order)
                        .isTrue();
                    assertThat(migration.pttl(order.get(i), moved.contains(order.get(i))))
                        .as("%s's lease extended", order.get(i)).isGreaterThan(30_000);
                }
                assertThat(answers.get(order.size()).get(10, TimeUnit.SECONDS)).as("a lock that is gone").isFalse();
            }
        }
        finally {
            migration.finish();
        }
    }

    private LockServer lettuceServer() {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.nodeAddresses()));
        factory.afterPropertiesSet();
        factory.start();
        resources.add(0, factory::destroy);
        LockServer server = new LettuceLockServer(factory, "lock:");
        resources.add(0, server);
        return server;
    }

    private static LockKeys keys(String name) {
        return LockKeys.of("lock:", name);
    }

    /** {@code count} lock names whose keys share the slot of {@code <prefix>-0}'s. */
    private static List<String> namesInOneSlot(String prefix, int count) {
        int slot = ClusterSlotHashUtil.calculateSlot(keys(prefix + "-0").lock());
        List<String> names = new ArrayList<>();
        for (int i = 0; names.size() < count; i++) {
            String name = prefix + "-" + i;
            if (ClusterSlotHashUtil.calculateSlot(keys(name).lock()) == slot) {
                names.add(name);
            }
        }
        return names;
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> both = new ArrayList<>(first);
        both.addAll(second);
        return both;
    }

    /** A slot moved by hand from the master that serves it to the next one, as {@code redis-cli --cluster reshard} does. */
    private record Migration(String slot, TestRedisServer source, TestRedisServer target, String targetId) {

        static Migration start(String name) {
            String key = keys(name).lock();
            int from = nodeHolding(key);
            TestRedisServer source = cluster.nodes().get(from);
            TestRedisServer target = cluster.nodes().get((from + 1) % cluster.nodes().size());
            String slot = String.valueOf(ClusterSlotHashUtil.calculateSlot(key));
            String targetId = target.command("CLUSTER", "MYID");
            target.command("CLUSTER", "SETSLOT", slot, "IMPORTING", source.command("CLUSTER", "MYID"));
            source.command("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
            return new Migration(slot, source, target, targetId);
        }

        void move(List<String> names) {
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), String.valueOf(target.port()), "", "0",
                    "5000", "KEYS"));
            names.forEach(name -> migrate.add(keys(name).lock()));
            assertThat(source.command(migrate.toArray(String[]::new))).isEqualTo("OK");
        }

        /** The key's PTTL where it is: on the target (ASKING: the slot is still the source's), or on the source. */
        long pttl(String name, boolean moved) {
            if (!moved) {
                return Long.parseLong(source.command("PTTL", keys(name).lock()).trim());
            }
            List<String> replies = target.commands(List.of(new String[] { "ASKING" }, new String[] { "PTTL", keys(name).lock() }));
            return Long.parseLong(replies.get(1).trim());
        }

        /** Moves what is left of the slot and hands it to the target on every master. */
        void finish() {
            String left = source.command("CLUSTER", "GETKEYSINSLOT", slot, "1000").replaceAll("[\\[\\]\\s]", "");
            if (!left.isEmpty()) {
                List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), String.valueOf(target.port()), "",
                        "0", "5000", "KEYS"));
                migrate.addAll(List.of(left.split(",")));
                source.command(migrate.toArray(String[]::new));
            }
            for (TestRedisServer node : cluster.nodes()) {
                node.command("CLUSTER", "SETSLOT", slot, "NODE", targetId);
            }
        }
    }
}
