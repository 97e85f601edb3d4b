package dev.leasehold.engine;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lean first steps (acquire_uncontended.lua, release_quiet.lua) on a real Redis, through each server kind: an
 * uncontended cycle takes them and nothing else; a try on a taken key takes the lean step and then the whole script,
 * and the key's next tries go straight to it; a release of a lock someone queued for falls through to the whole
 * script, which grants the key to the queue's head. Script calls are counted with {@code INFO commandstats}.
 */
class LeanStepsTest extends RealRedisEngineTest {

    private LockServer server;

    @BeforeEach
    void createServerAndLoadScripts() {
        server = fixture.server("lock:");
        // every script loaded once (a first call is EVALSHA refused, then EVAL), so that the counts below are the steps'
        LockKeys warm = LockKeys.of("lock:", "lean-warm-up");
        assertThat(await(server.acquire(warm, LockMode.EXCLUSIVE, "a", 30_000, 0, "a", QueueTry.JOIN)).granted()).isTrue();
        assertThat(await(server.acquire(warm, LockMode.EXCLUSIVE, "b", 30_000, 0, "b", QueueTry.JOIN)).granted()).isFalse();
        assertThat(await(server.release(warm, LockMode.EXCLUSIVE, "a"))).isTrue();
        await(server.withdraw(warm, "b"));
        LockKeys quiet = LockKeys.of("lock:", "lean-warm-up-quiet");
        assertThat(await(server.acquire(quiet, LockMode.EXCLUSIVE, "c", 30_000, 0, "c", QueueTry.JOIN)).granted()).isTrue();
        assertThat(await(server.release(quiet, LockMode.EXCLUSIVE, "c"))).isTrue();
    }

    @Test
    void anUncontendedCycleTakesOneLeanStepEach() {
        LockKeys keys = LockKeys.of("lock:", "lean-cycle");
        long before = scriptCalls();
        Grant grant = await(server.acquire(keys, LockMode.EXCLUSIVE, "holder", 30_000, 0, "holder", QueueTry.JOIN));
        assertThat(grant.granted()).isTrue();
        assertThat(redis.server().command("GET", "lock:{lean-cycle}")).as("a quiet grant")
            .isEqualTo("holder#" + grant.reservedThrough());
        assertThat(await(server.release(keys, LockMode.EXCLUSIVE, "holder"))).isTrue();
        assertThat(scriptCalls() - before).as("script calls of an uncontended acquire and release").isEqualTo(2);
        assertThat(lockKeyExists("lean-cycle")).isFalse();
    }

    @Test
    void aTryOnATakenKeyFallsThroughToTheWholeScriptAndTheKeysNextTriesGoStraightToIt() {
        LockKeys holderKeys = LockKeys.of("lock:", "lean-taken");
        LockKeys waiterKeys = LockKeys.of("lock:", "lean-taken"); // another instance's
        assertThat(await(server.acquire(holderKeys, LockMode.EXCLUSIVE, "holder", 30_000, 0, "holder", QueueTry.JOIN))
            .granted()).isTrue();
        long before = scriptCalls();
        assertThat(await(server.acquire(waiterKeys, LockMode.EXCLUSIVE, "try-1", 30_000, 0, "waiter", QueueTry.JOIN))
            .granted()).as("refused").isFalse();
        assertThat(scriptCalls() - before).as("the lean step, then the whole script").isEqualTo(2);
        assertThat(redis.server().command("ZCARD", "lock:{lean-taken}:queue")).as("queued by the whole script")
            .isEqualTo("1");

        before = scriptCalls();
        assertThat(await(server.acquire(waiterKeys, LockMode.EXCLUSIVE, "try-2", 30_000, 0, "waiter", QueueTry.JOIN))
            .granted()).isFalse();
        assertThat(scriptCalls() - before).as("the next try: the whole script only").isEqualTo(1);

        // the holder's release: its lean step finds the queue, the whole script grants the key to the queue's head
        before = scriptCalls();
        assertThat(await(server.release(holderKeys, LockMode.EXCLUSIVE, "holder"))).isTrue();
        assertThat(scriptCalls() - before).as("the lean release, then the whole one").isEqualTo(2);
        assertThat(redis.server().command("GET", "lock:{lean-taken}")).as("granted to the queue's head")
            .startsWith("queue-grant:waiter|W");

        // the head's claim is the whole script's grant: its release goes straight to the whole script
        assertThat(await(server.acquire(waiterKeys, LockMode.EXCLUSIVE, "claim", 30_000, 0, "waiter", QueueTry.QUEUED))
            .granted()).isTrue();
        before = scriptCalls();
        assertThat(await(server.release(waiterKeys, LockMode.EXCLUSIVE, "claim"))).isTrue();
        assertThat(scriptCalls() - before).as("the release of a grant the whole script made").isEqualTo(1);
    }

    @Test
    void aReleaseWithinItsBlockOfTheClockKeepsTheLastTokenForTheNextGrant() {
        LockKeys keys = LockKeys.of("lock:", "lean-ahead");
        Grant grant = await(server.acquire(keys, LockMode.EXCLUSIVE, "holder", 30_000, 0, "holder", QueueTry.JOIN));
        // as if the release came within the block's microseconds: the value's last token far ahead of the clock
        long ahead = grant.fencingToken() + 5_000_000;
        redis.server().command("SET", "lock:{lean-ahead}", "holder#" + ahead, "PX", "30000");
        long before = scriptCalls();
        assertThat(await(server.release(keys, LockMode.EXCLUSIVE, "holder"))).isTrue();
        assertThat(scriptCalls() - before).as("the lean release alone").isEqualTo(1);
        assertThat(redis.server().command("GET", "lock:{lean-ahead}:fence")).as("the counter key keeps it")
            .isEqualTo(Long.toString(ahead));
        Grant next = await(server.acquire(keys, LockMode.EXCLUSIVE, "next", 30_000, 0, "next", QueueTry.JOIN));
        assertThat(next.fencingToken()).as("the next grant, above the last token").isGreaterThan(ahead);
    }

    private static <T> T await(CompletableFuture<T> step) {
        try {
            return step.get(5, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
