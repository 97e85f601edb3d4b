package dev.leasehold.autoconfigure;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.ReservedFences;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fair queue's timing, the token block and the hand-off turn are {@code leasehold.*} properties with today's
 * values as defaults, validated at startup, and they reach Redis (issue 20).
 */
@Timeout(60)
class TuningPropertiesTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port());
    }

    @Test
    void theDefaultsAreTheTimingsThatWereConstants() {
        runner().run(context -> {
            LockEngineSettings settings = context.getBean(LockEngineSettings.class);
            assertThat(settings.fairQueue().entryTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(settings.fairQueue().claimTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(settings.fairQueue().refreshInterval()).isEqualTo(Duration.ofSeconds(1));
            assertThat(settings.fairQueue().tokenBlock()).isEqualTo(16);
            assertThat(settings.handOff().maxTurn()).isEqualTo(64);
            assertThat(settings.handOff().turnCheck()).isEqualTo(Duration.ofMillis(25));
            assertThat(settings.handOff().linger()).isEqualTo(Duration.ofNanos(100_000));
        });
        runner().withPropertyValues("leasehold.hand-off.linger=0").run(context -> assertThat(
                context.getBean(LockEngineSettings.class).handOff().linger()).isZero());
        runner().withPropertyValues("leasehold.hand-off.linger=250us").run(context -> assertThat(
                context.getBean(LockEngineSettings.class).handOff().linger()).isEqualTo(Duration.ofNanos(250_000)));
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = { "lettuce", "jedis" })
    void theTokenBlockSizeReachesTheFencingCounter(String client) {
        runner().withPropertyValues("spring.data.redis.client-type=" + client, "leasehold.hand-off.token-block=4",
                "leasehold.key-prefix=block-" + client + ":").run(context -> {
                    LockService locks = context.getBean(LockService.class);
                    try (LockHandle handle = locks.lock("blocked", Duration.ofSeconds(1))) {
                        // the grant reserves the 3 tokens after its own: Redis records the block's end
                        long reserved = ReservedFences.lastHandedOut(redis.server(),
                                LockKeys.of("block-" + client + ":", "blocked"));
                        assertThat(reserved).isEqualTo(handle.fencingToken() + 3);
                    }
                });
    }

    @Test
    void maxTurnZeroSendsEveryReleaseThroughRedis() throws Exception {
        runner().withPropertyValues("leasehold.hand-off.max-turn=0", "leasehold.key-prefix=noturn:").run(context -> {
            LockService locks = context.getBean(LockService.class);
            LockHandle first = locks.lock("hot", Duration.ofSeconds(1));
            java.util.concurrent.CompletableFuture<LockHandle> second = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> locks.lock("hot", Duration.ofSeconds(10)));
            dev.leasehold.engine.Await.until(Duration.ofSeconds(5), "the second thread queued",
                    () -> context.getBean(dev.leasehold.engine.DefaultLockEngine.class).heldLockCount() == 1
                            && !second.isDone());
            long firstToken = first.fencingToken();
            first.close();
            try (LockHandle next = second.get(10, java.util.concurrent.TimeUnit.SECONDS)) {
                // a hand-off takes the next token of the block (first + 1); a grant through Redis is above the block
                assertThat(next.fencingToken()).isGreaterThan(firstToken + 16);
            }
        });
    }

    @Test
    void aRefreshIntervalThatAnEntryWouldNotOutliveFailsStartupNamingTheProperties() {
        runner().withPropertyValues("leasehold.fair-queue.entry-timeout=1s", "leasehold.fair-queue.refresh-interval=1s")
            .run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause()
                .hasMessageContaining("leasehold.fair-queue.entry-timeout")
                .hasMessageContaining("leasehold.fair-queue.refresh-interval"));
        runner().withPropertyValues("leasehold.hand-off.token-block=0")
            .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("leasehold.hand-off.token-block"));
        // a wider block would let tokens run more than a millisecond ahead of the Redis clock
        runner().withPropertyValues("leasehold.hand-off.token-block=1001")
            .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("leasehold.hand-off.token-block").hasMessageContaining("1000"));
        runner().withPropertyValues("leasehold.hand-off.max-turn=-1")
            .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("leasehold.hand-off.max-turn"));
        runner().withPropertyValues("leasehold.hand-off.linger=1s")
            .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("leasehold.hand-off.linger"));
    }

    /**
     * Every {@code leasehold.*} duration but the wait is at most 365 days (longer ones started, and a 300-year
     * lease-time was lost at once); the wait may be any length.
     */
    @Test
    void durationsLongerThanAYearFailStartupNamingTheProperty() {
        for (String property : java.util.List.of("leasehold.lease-time", "leasehold.redis-timeout",
                "leasehold.subscription-linger", "leasehold.replica-ack.timeout", "leasehold.quorum.fence-retention",
                "leasehold.fair-queue.entry-timeout", "leasehold.fair-queue.claim-timeout")) {
            runner().withPropertyValues(property + "=109500d")
                .run(context -> assertThat(context).as(property).hasFailed().getFailure().rootCause()
                    .hasMessageContaining(property).hasMessageContaining("365 days"));
        }
        runner().withPropertyValues("leasehold.lease-time=365d", "leasehold.wait-time=109500d",
                "leasehold.key-prefix=long-durations:")
            .run(context -> {
                assertThat(context).hasNotFailed();
                try (LockHandle handle = context.getBean(LockService.class).lock("long", Duration.ofSeconds(5))) {
                    assertThat(handle.isHeld()).isTrue();
                    assertThat(handle.remainingLease()).isGreaterThan(Duration.ofDays(364));
                }
            });
    }

    @Test
    void everyTuningPropertyHasMetadataForIdes() throws Exception {
        try (InputStream metadata = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            String json = new String(metadata.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"leasehold.fair-queue.entry-timeout\"", "\"leasehold.fair-queue.claim-timeout\"",
                    "\"leasehold.fair-queue.refresh-interval\"", "\"leasehold.hand-off.token-block\"",
                    "\"leasehold.hand-off.max-turn\"", "\"leasehold.hand-off.turn-check\"",
                    "\"leasehold.hand-off.linger\"");
        }
    }
}
