package dev.leasehold.engine;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.server.QueueTry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the steps of a contended key cost Redis, counted with {@code INFO commandstats} (commands run inside scripts
 * included; a figure load cannot move): a queued waiter's look, the release that grants the key to it, its claim, and
 * a token reservation for a local hand-off on a quiet and on a noisy key. Pins the counts, so that a command added to
 * these paths fails here: they are what a grant costs when many wait (issue 31, item 5; benchmarks/SCALE-RESULTS.md).
 */
class QueuedStepCostTest extends RealRedisEngineTest {

    private LockServer server;

    @BeforeEach
    void createServer() {
        server = fixture.server("lock:");
    }

    /**
     * A waiter already queued skips the uncontended path's look (its own entry makes the key contended), and its
     * look extends the queue keys' expiry only every few looks (with slack) and leaves its instance's liveness key to
     * the heartbeat; the release replaces the holder's value with the grant rather than deleting it first and reads a
     * noisy key's queue without asking whether it exists; the claim deletes no writer mark (a queued writer sets none).
     * The grant carries the releasing holder's last fencing token, so the claim reads no counter key.
     * Before: 9 to 11 commands a look, 12 a release, 7 a claim; now 7, 10 and 4.
     */
    @Test
    void aQueuedWaitersLookTheReleaseThatGrantsAndTheClaimRunOnlyWhatTheyNeed() {
        LockKeys keys = LockKeys.of("lock:", "queued-cost");
        Grant held = await(server.acquire(keys, LockMode.EXCLUSIVE, "holder", 30_000, 0, "holder-instance",
                QueueTry.JOIN));
        assertThat(held.granted()).isTrue();
        assertThat(await(server.acquire(keys, LockMode.EXCLUSIVE, "first-try", 30_000, 0, "waiter-instance",
                QueueTry.JOIN)).granted()).as("refused, queued").isFalse();

        Map<String, Long> look = counted(() -> server.acquire(keys, LockMode.EXCLUSIVE, "look", 30_000, 0,
                "waiter-instance", QueueTry.QUEUED), grant -> assertThat(grant.granted()).isFalse());
        // EVALSHA, GET (holder), TIME, PTTL (its lease), ZRANK, ZADD (entry expiry), PTTL (queue key); its instance's
        // liveness key is the heartbeat's to write (QueueLivenessTest)
        assertThat(look).as("a queued waiter's look").doesNotContainKeys("exists", "pexpire", "set");
        assertThat(total(look)).as("commands of a queued waiter's look: " + look).isLessThanOrEqualTo(7);

        Map<String, Long> between = counted(() -> server.lookWhileQueued(keys, "waiter-instance"),
                refused -> assertThat(refused).as("held by another: sleep").isNotNull());
        // EVALSHA, GET (holder), ZRANK, PTTL (its lease): nothing written (BetweenTries sends it only while the entry lasts)
        assertThat(total(between)).as("commands of a look between tries: " + between).isLessThanOrEqualTo(4);

        Map<String, Long> release = counted(() -> server.release(keys, LockMode.EXCLUSIVE, "holder"),
                released -> assertThat(released).isTrue());
        // EVALSHA, GET, TIME, ZRANGEBYSCORE (prune), ZRANGE (head), EXISTS (its liveness), SET (grant), 2 ZREM, PUBLISH
        assertThat(release).as("the release that grants").doesNotContainKey("del").containsEntry("exists", 1L);
        assertThat(total(release)).as("commands of the release that grants: " + release).isLessThanOrEqualTo(10);

        assertThat(redis.server().command("GET", "lock:{queued-cost}")).as("the grant carries the holder's last token")
                .isEqualTo("queue-grant:waiter-instance|W@" + held.reservedThrough());
        assertThat(await(server.lookWhileQueued(keys, "waiter-instance"))).as("granted to it: a try claims it")
                .isNull();
        Map<String, Long> claim = counted(() -> server.acquire(keys, LockMode.EXCLUSIVE, "waiter", 30_000, 0,
                "waiter-instance", QueueTry.QUEUED), grant -> assertThat(grant.fencingToken())
                        .as("above every token the holder had").isGreaterThan(held.reservedThrough()));
        // EVALSHA, GET (the grant, with the holder's last token: no counter read), TIME, SET
        assertThat(claim).as("the claim").doesNotContainKeys("exists", "del").containsEntry("get", 1L);
        assertThat(total(claim)).as("commands of the claim: " + claim).isLessThanOrEqualTo(4);
    }

    /**
     * A reservation of the next token block (a local hand-off) starts above the holder's last token, which the
     * counter key never passes while it holds: no counter read. On a quiet grant (nobody queued since) it reads no
     * queue either and the key stays quiet; on a noisy one it asks only whether anyone is queued (a dead or expired
     * head only ends the local turn early, and the release that ends it drops that head).
     */
    @Test
    void aTokenReservationReadsNoCounterAndOnAQuietKeyNoQueue() {
        LockKeys keys = LockKeys.of("lock:", "reserve-cost");
        Grant grant = await(server.acquire(keys, LockMode.EXCLUSIVE, "holder", 30_000, 0, "holder-instance",
                QueueTry.JOIN));
        assertThat(grant.granted()).isTrue();

        Map<String, Long> quiet = counted(() -> server.reserveFences(keys, "holder", 30_000),
                block -> assertThat(block.othersQueued()).isFalse());
        // EVALSHA, GET, TIME, SET
        assertThat(total(quiet)).as("commands of a reservation on a quiet key: " + quiet).isLessThanOrEqualTo(4);
        assertThat(redis.server().command("GET", "lock:{reserve-cost}")).as("still quiet").contains("#");

        assertThat(await(server.acquire(keys, LockMode.EXCLUSIVE, "try", 30_000, 0, "waiter-instance",
                QueueTry.JOIN)).granted()).isFalse();
        Map<String, Long> noisy = counted(() -> server.reserveFences(keys, "holder", 30_000),
                block -> assertThat(block.othersQueued()).isTrue());
        // EVALSHA, GET, TIME, SET, EXISTS (the queue: not its head's liveness, a dead head only ends the turn early)
        assertThat(noisy).as("a reservation on a noisy key").containsEntry("get", 1L).containsEntry("exists", 1L)
            .doesNotContainKey("zrange");
        assertThat(total(noisy)).as("commands of a reservation on a noisy key: " + noisy).isLessThanOrEqualTo(5);
    }

    private static <T> T await(CompletableFuture<T> step) {
        try {
            return step.get(5, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Runs one step and counts the commands it ran (a script's first load, EVALSHA refused then EVAL, left out). */
    private static <T> Map<String, Long> counted(Supplier<CompletableFuture<T>> step, Consumer<T> check) {
        redis.server().command("CONFIG", "RESETSTAT");
        check.accept(await(step.get()));
        Map<String, Long> calls = new LinkedHashMap<>();
        commandStats(redis.server()).forEach((command, stat) -> {
            if (stat[0] > 0 && !command.equals("eval") && !command.equals("script")) {
                calls.put(command, stat[0]);
            }
        });
        return calls;
    }

    private static long total(Map<String, Long> calls) {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }
}
