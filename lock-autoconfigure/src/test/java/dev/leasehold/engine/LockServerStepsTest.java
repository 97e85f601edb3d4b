package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.test.redis.TestRedisServer;

/** Each per-server step answers what its contract says (a failing script must not pass for a done step). */
class LockServerStepsTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private EngineFixture fixture;

    private LockServer server;

    @BeforeEach
    void setUp() {
        fixture = new EngineFixture(redis.server());
        server = fixture.server("lock:");
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> step) throws Exception {
        return step.get(5, TimeUnit.SECONDS);
    }

    /**
     * Found by the campaign (replica-ack configuration): the fair queue's head was a reader that queued before a
     * writer, and the writer's mark (kept readers out while it waited for the readers holding) refused that reader
     * too, while the writer was refused as not the head: the key stood free until the mark ran out or the writer
     * tried again. A reader that queued before the marking writer goes first.
     */
    @Test
    void aReaderQueuedBeforeAWaitingWriterIsNotKeptOutByItsMark() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "reader-ahead");
        assertThat(await(server.acquire(keys, LockMode.EXCLUSIVE, "x", 30_000, 0, "x", QueueTry.JOIN)).granted()).isTrue();
        // a reader of another instance queues behind the holder
        assertThat(await(server.acquire(keys, LockMode.READ, "r1-try", 30_000, 0, "r1", QueueTry.JOIN)).granted()).isFalse();
        assertThat(await(server.release(keys, LockMode.EXCLUSIVE, "x"))).isTrue();
        // before that reader tries again, a reader that does not queue comes by and shares
        assertThat(await(server.acquire(keys, LockMode.READ, "r0", 30_000, 0, "r0", QueueTry.NONE)).granted()).isTrue();
        // a writer: refused because of the reader, it marks the key and queues behind the first reader
        assertThat(await(server.acquire(keys, LockMode.WRITE, "w-try", 30_000, 10_000, "w", QueueTry.JOIN)).granted()).isFalse();
        assertThat(await(server.release(keys, LockMode.READ, "r0"))).isTrue();
        // the first reader queued before the writer: its turn now, not after the mark's 10 s
        assertThat(await(server.acquire(keys, LockMode.READ, "r1", 30_000, 0, "r1", QueueTry.JOIN)).granted()).isTrue();
        // and the writer after it
        assertThat(await(server.acquire(keys, LockMode.WRITE, "w-try-2", 30_000, 10_000, "w", QueueTry.JOIN)).granted()).isFalse();
        assertThat(await(server.release(keys, LockMode.READ, "r1"))).isTrue();
        assertThat(await(server.acquire(keys, LockMode.WRITE, "w", 30_000, 10_000, "w", QueueTry.JOIN)).granted()).isTrue();
    }

    /**
     * A read lease that ran out stays in the readers zset until a script removes it, and the zset lives as long as its
     * longest lease (a holdAtLeast release shortens a reader's lease, not the zset's); a withdrawal counts only live
     * readers, so it may grant the key to a queued writer while the expired reader is still there. That reader's late
     * release then removed it and answered "released", and its holder was never told that a writer had the key
     * meanwhile. A read lease that ran out is not released.
     */
    @Test
    void aReadLeaseThatRanOutIsNotReleasedOnceAWithdrawalGaveTheKeyToAWriter() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "reader-ran-out");
        assertThat(await(server.acquire(keys, LockMode.READ, "r", 50, 0, "r", QueueTry.JOIN)).granted()).isTrue();
        // another reader, on a long lease, released with a short holdAtLeast: the zset outlives both leases
        assertThat(await(server.acquire(keys, LockMode.READ, "r2", 30_000, 0, "r2", QueueTry.JOIN)).granted()).isTrue();
        assertThat(await(server.release(keys, LockMode.READ, "r2", 50))).isTrue();
        // two writers queue behind the reader
        assertThat(await(server.acquire(keys, LockMode.WRITE, "x-try", 30_000, 0, "x", QueueTry.JOIN)).granted()).isFalse();
        assertThat(await(server.acquire(keys, LockMode.WRITE, "w-try", 30_000, 0, "w", QueueTry.JOIN)).granted()).isFalse();
        Await.until(Duration.ofSeconds(5), "the read lease ran out", () -> {
            try {
                return !await(server.isLocked(keys));
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        // the first writer gives up: its withdrawal hands the key to the next, which claims it
        assertThat(await(server.withdraw(keys, "x"))).isTrue();
        assertThat(await(server.acquire(keys, LockMode.WRITE, "w", 30_000, 0, "w", QueueTry.QUEUED)).granted()).isTrue();
        // the reader comes back late: its lease is gone, so the release must say so (its holder is told)
        assertThat(await(server.release(keys, LockMode.READ, "r"))).isFalse();
        assertThat(await(server.release(keys, LockMode.WRITE, "w"))).isTrue();
    }

    /**
     * The last token a grant hands out is kept in the lock's value while it is held, and in a counter key only
     * when a block reaches past the clock: at the grant when it reaches past the lease (the key could expire
     * first), at the release when the clock has not passed it yet. Either way the next grant is above it. The
     * widest block (1000 tokens) is 1 ms of the µs clock: past a 1 ms lease, within a 30 s lease.
     */
    @Test
    void aTokenBlockThatReachesPastTheClockKeepsTheNextGrantAboveIt() throws Exception {
        TestRedisServer redis = LockServerStepsTest.redis.server();
        int block = FairQueue.MAX_TOKEN_BLOCK;
        for (long leaseMillis : new long[] { 1, 30_000 }) {
            LockKeys keys = LockKeys.of("lock:", "wide-block-" + leaseMillis);
            LockServer wide = ((dev.leasehold.engine.redis.ScriptedLockServer) fixture.server("lock:"))
                .fairQueue(new FairQueue(Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(1), block));
            Grant grant = await(wide.acquire(keys, LockMode.EXCLUSIVE, "wide", leaseMillis, 0, "wide"));
            assertThat(grant.granted()).isTrue();
            assertThat(grant.reservedThrough()).isEqualTo(grant.fencingToken() + block - 1);
            if (leaseMillis == 1) {
                // the key expires before the clock passes its block: the counter key keeps the block's end
                assertThat(Long.parseLong(redis.command("GET", keys.fence()).trim())).isEqualTo(grant.reservedThrough());
            }
            else {
                assertThat(ReservedFences.lastHandedOut(redis, keys)).isEqualTo(grant.reservedThrough());
                assertThat(redis.command("EXISTS", keys.fence()).trim()).isEqualTo("0");
                // released within the block's millisecond or not: the next grant is above it
                assertThat(await(wide.release(keys, LockMode.EXCLUSIVE, "wide"))).isTrue();
            }
            Await.until(Duration.ofSeconds(5), "the key is free", () -> "0".equals(redis.command("EXISTS", keys.lock()).trim()));
            Grant next = await(server.acquire(keys, LockMode.EXCLUSIVE, "next", 30_000, 0, "next"));
            assertThat(next.fencingToken()).isGreaterThan(grant.reservedThrough());
            assertThat(await(server.release(keys, LockMode.EXCLUSIVE, "next"))).isTrue();
        }
        // a grant with the default block leaves no counter key behind: nothing to pile up per key
        LockKeys plain = LockKeys.of("lock:", "plain-block");
        assertThat(await(server.acquire(plain, LockMode.EXCLUSIVE, "plain", 30_000, 0, "plain")).granted()).isTrue();
        // (quiet: nobody queued, owner.lua)
        assertThat(redis.command("GET", plain.lock())).startsWith("plain#");
        assertThat(await(server.release(plain, LockMode.EXCLUSIVE, "plain"))).isTrue();
        assertThat(redis.command("EXISTS", plain.lock(), plain.fence())).isEqualTo("0");
    }

    @Test
    void everyStepAnswersForItsOwnTokenOnly() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "steps");
        for (LockMode mode : new LockMode[] { LockMode.EXCLUSIVE, LockMode.READ }) {
            Grant grant = await(server.acquire(keys, mode, "mine", 30_000, 0, "waiter"));
            assertThat(grant.granted()).isTrue();
            assertThat(await(server.isLocked(keys))).isTrue();
            assertThat(await(server.renew(keys, mode, "mine", 30_000))).isTrue();
            assertThat(await(server.renew(keys, mode, "theirs", 30_000))).isFalse();
            assertThat(await(server.release(keys, mode, "theirs"))).isFalse();
            assertThat(await(server.release(keys, mode, "mine"))).as("%s released", mode).isTrue();
            assertThat(await(server.release(keys, mode, "mine"))).isFalse();
            assertThat(await(server.isLocked(keys))).isFalse();
        }
    }

    @Test
    void aClosedServerFailsItsStepsAtOnceAndNeverConnectsAgain() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "closed");
        assertThat(await(server.isLocked(keys))).isFalse();
        server.close();
        int clientsAfterClose = clients();
        // a late reply's follow-up (a take-back, a withdrawn writer) after close: no blocking reconnect
        long started = System.nanoTime();
        assertThatThrownBy(() -> await(server.release(keys, LockMode.EXCLUSIVE, "late")))
            .hasCauseInstanceOf(LockServerException.class).hasMessageContaining("closed");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
        assertThat(clients()).isLessThanOrEqualTo(clientsAfterClose);
    }

    private int clients() {
        return redis.server().command("CLIENT", "LIST").split("id=").length - 1;
    }

    @Test
    void aWriterWithdrawsOnlyItsOwnMark() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "mark");
        assertThat(await(server.acquire(keys, LockMode.READ, "reader", 30_000, 0, "r")).granted()).isTrue();
        Grant refused = await(server.acquire(keys, LockMode.WRITE, "w-try-1", 30_000, 5_000, "writer"));
        assertThat(refused.granted()).isFalse();
        assertThat(refused.blockedForMillis()).isBetween(1L, 30_000L);
        assertThat(await(server.withdraw(keys, "someone-else"))).isFalse();
        assertThat(redis.server().command("EXISTS", keys.writerWaiting())).isEqualTo("1");
        assertThat(await(server.withdraw(keys, "writer"))).isTrue();
        assertThat(redis.server().command("EXISTS", keys.writerWaiting())).isEqualTo("0");
    }

    @Test
    void aHolderInItsLastMillisecondIsReportedAsEndingNowNotAsHavingNoExpiry() throws Exception {
        LockKeys keys = LockKeys.of("lock:", "last-ms");
        // a key with no expiry is not ours, but must not make waiters sleep forever either: at most a lease
        redis.server().command("SET", keys.lock(), "someone");
        Grant refused = await(server.acquire(keys, LockMode.EXCLUSIVE, "t", 700, 0, "w"));
        assertThat(refused.blockedForMillis()).isBetween(1L, 700L);
        redis.server().command("PEXPIRE", keys.lock(), "1");
        Grant ending = await(server.acquire(keys, LockMode.READ, "t2", 30_000, 0, "w"));
        assertThat(ending.granted() || ending.blockedForMillis() <= 1).as("%s", ending).isTrue();
        assertThat(Duration.ofMillis(ending.blockedForMillis())).isLessThan(Duration.ofSeconds(1));
    }
}
