package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.redis.ScriptedLockServer;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every grant reserves a block of fencing tokens; on a key that changes hands faster than the clock moves a block,
 * blocks used to pile up ahead of the clock (block minus cycle per cycle, without bound), and a counter key lost by
 * a restart or gone with its retention let the next token fall below tokens already handed out. Tokens now never
 * run more than a block ahead of the Redis clock (a block is at most 1000 µs), and a counter key lives as long as
 * it is ahead of the clock it counts against.
 */
@Timeout(120)
class FencingAheadOfTheClockTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static final FairQueue WIDEST_BLOCK = new FairQueue(Duration.ofSeconds(3), Duration.ofSeconds(3),
            Duration.ofSeconds(1), FairQueue.MAX_TOKEN_BLOCK);

    private EngineFixture fixture;

    @BeforeEach
    void setUp() {
        fixture = new EngineFixture(redis.server());
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void aBusyKeyWithTheWidestBlockKeepsItsTokensWithinABlockOfTheClockSoARestartCannotMakeThemGoBack() throws Exception {
        TestRedisServer server = redis.server();
        Assumptions.assumeTrue(server.controllable(), "needs a server it can restart");
        LockServer steps = ((ScriptedLockServer) fixture.server("lock:")).fairQueue(WIDEST_BLOCK);
        LockKeys keys = LockKeys.of("lock:", "busy");
        long highest = cycle(steps, keys, 3000, 0);
        long aheadMicros = highest - serverMicros(server);
        // before the fix: about 3000 x (1000 - cycle) µs, seconds ahead of the clock
        assertThat(aheadMicros).as("how far the tokens handed out run ahead of the Redis clock (µs)")
            .isLessThanOrEqualTo(FairQueue.MAX_TOKEN_BLOCK);

        server.stop();
        server.start(); // no persistence: the lock, its value and the counter key are gone
        Grant afterRestart = awaitStep(steps.acquire(keys, LockMode.EXCLUSIVE, "after-restart", 30_000, 0, "after"));
        assertThat(afterRestart.granted()).isTrue();
        assertThat(afterRestart.fencingToken()).as("the first token after the restart").isGreaterThan(highest);
    }

    /**
     * Quorum mode with {@code leasehold.quorum.fence-retention}: a node's counter moves on by a block at every grant,
     * so on a busy key it runs ahead of the clients' clocks; it must not expire (the retention, here 2 s) before the
     * clocks have passed it, or the next token (the client's clock) falls below tokens already handed out.
     */
    @Test
    void aQuorumCounterRunAheadOfTheClientsClocksOutlivesItsLeadBeforeItExpires() throws Exception {
        TestRedisServer server = redis.server();
        Duration retention = Duration.ofSeconds(2);
        ScriptedLockServer node = fixture.track(LettuceLockServer
            .quorumNode((LettuceConnectionFactory) fixture.connectionFactory(), "lock:"))
            .fairQueue(WIDEST_BLOCK);
        node.fenceRetention(retention);
        LockKeys keys = LockKeys.of("lock:", "counted");
        long highest = 0;
        // a quorum grant takes one token; the blocks come with token reservations (the hand-offs'): the lead grows
        // by (block - cycle) per cycle, run until it is past the retention
        for (int round = 0; round < 40 && highest - System.currentTimeMillis() * 1000 < 3_000_000; round++) {
            highest = cycle(node, keys, 500, highest);
        }
        long leadMillis = (highest - System.currentTimeMillis() * 1000) / 1000;
        long ttl = Long.parseLong(server.command("PTTL", keys.fence()).trim());
        // the counter lives until the clocks have passed it, then the retention
        assertThat(ttl).as("the counter's PTTL, %d ms ahead of this client's clock", leadMillis)
            .isGreaterThanOrEqualTo(retention.toMillis() + leadMillis - 250);

        Await.until(Duration.ofSeconds(30), "the counter expired",
                () -> "0".equals(server.command("EXISTS", keys.fence()).trim()));
        Grant next = awaitStep(node.acquire(keys, LockMode.EXCLUSIVE, "after-idle", 30_000, 0, "after"));
        assertThat(next.granted()).isTrue();
        assertThat(next.fencingToken()).as("the first token after the counter expired").isGreaterThan(highest);
    }

    @Test
    void aTokenBlockWiderThanAMillisecondOfTheClockIsRefused() {
        assertThatThrownBy(() -> new FairQueue(Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(1),
                FairQueue.MAX_TOKEN_BLOCK + 1))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("leasehold.hand-off.token-block")
            .hasMessageContaining("1000");
    }

    /**
     * {@code cycles} grants and releases of {@code keys}, back to back (sent without waiting: the steps of a key
     * run in order), each with a token reservation when the server makes them (quorum nodes: a grant there reserves
     * no block); returns the highest token reserved by any of them, or {@code highest} if that is higher.
     */
    private static long cycle(LockServer steps, LockKeys keys, int cycles, long highest) throws Exception {
        // one cycle waited for first: the scripts are loaded (a first call that Redis does not know yet is sent
        // again, behind the steps that followed it)
        Grant first = awaitStep(steps.acquire(keys, LockMode.EXCLUSIVE, "first", 30_000, 0, "first"));
        assertThat(first.granted()).isTrue();
        highest = Math.max(highest, first.reservedThrough());
        boolean reserving = !steps.queuesWaiters();
        if (reserving) {
            highest = Math.max(highest, awaitStep(steps.reserveFences(keys, "first", 30_000)).last());
        }
        assertThat(awaitStep(steps.release(keys, LockMode.EXCLUSIVE, "first"))).isTrue();
        List<CompletableFuture<Grant>> grants = new ArrayList<>(cycles);
        List<CompletableFuture<LockServer.FenceBlock>> blocks = new ArrayList<>(cycles);
        CompletableFuture<Boolean> lastRelease = null;
        for (int i = 0; i < cycles; i++) {
            String token = "holder-" + i;
            grants.add(steps.acquire(keys, LockMode.EXCLUSIVE, token, 30_000, 0, token));
            if (reserving) {
                blocks.add(steps.reserveFences(keys, token, 30_000));
            }
            lastRelease = steps.release(keys, LockMode.EXCLUSIVE, token);
        }
        assertThat(awaitStep(lastRelease)).isTrue();
        for (int i = 0; i < cycles; i++) {
            Grant granted = awaitStep(grants.get(i));
            assertThat(granted.granted()).isTrue();
            assertThat(granted.fencingToken()).as("every token above the tokens before it").isGreaterThan(highest);
            highest = Math.max(highest, granted.reservedThrough());
            if (reserving) {
                LockServer.FenceBlock block = awaitStep(blocks.get(i));
                assertThat(block).as("a block reserved by the holder").isNotNull();
                assertThat(block.first()).as("every token above the tokens before it").isGreaterThan(highest);
                highest = block.last();
            }
        }
        return highest;
    }

    private static long serverMicros(TestRedisServer server) {
        // RespClient renders the array reply as [seconds, microseconds]
        String[] time = server.command("TIME").replace("[", "").replace("]", "").split(",");
        return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
    }

    private static <T> T awaitStep(CompletableFuture<T> step) throws Exception {
        return step.get(20, TimeUnit.SECONDS);
    }
}
