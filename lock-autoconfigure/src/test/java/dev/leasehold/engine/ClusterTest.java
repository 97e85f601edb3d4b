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
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine on a real three-master Redis Cluster: every script stays in one slot, wake-ups cross nodes. */
class ClusterTest extends ClusterEngineTest {

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
            if (owner.serverName().equals("valkey") || Integer.parseInt(owner.version().split("\\.")[0]) >= 7) {
                // Redis 7, Valkey: a sharded subscription on the node that owns the key's slot, not a cluster-wide channel
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
}
