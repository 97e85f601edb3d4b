package dev.leasehold.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServer.Renewal;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The watchdog's tick renews in batches ({@link LockServer#renewAll}): a thousand exclusive leases per script
 * call, each still compare-then-extend on its own key, and each answer is its own key's.
 */
@Timeout(60)
class RenewalBatchTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @ParameterizedTest
    @EnumSource(EngineFixture.ServerKind.class)
    void aBatchRenewsOnlyWhatItsTokensStillOwnInAFewScriptCalls(EngineFixture.ServerKind kind) throws Exception {
        try (EngineFixture fixture = new EngineFixture(redis.server(), kind)) {
            LockServer server = fixture.server(fixture.connectionFactory(), "lock:");
            String run = kind.name().toLowerCase() + "-" + System.nanoTime();
            List<Renewal> renewals = new ArrayList<>();
            for (int i = 0; i < 2_500; i++) {
                LockKeys keys = LockKeys.of("lock:", run + "-" + i);
                assertThat(server.acquire(keys, LockMode.EXCLUSIVE, "token-" + i, 5_000, 0, "w" + i)
                    .get(5, TimeUnit.SECONDS).granted()).isTrue();
                renewals.add(new Renewal(keys, LockMode.EXCLUSIVE, "token-" + i, 60_000));
            }
            LockKeys reader = LockKeys.of("lock:", run + "-reader");
            assertThat(server.acquire(reader, LockMode.READ, "reader", 5_000, 0, "r").get(5, TimeUnit.SECONDS).granted())
                .isTrue();
            renewals.add(new Renewal(reader, LockMode.READ, "reader", 60_000));
            // someone else owns key 7 now, key 8 is gone, and key 9's renewal carries a stale token
            redis.server().command("SET", renewals.get(7).keys().lock(), "someone-else");
            redis.server().command("DEL", renewals.get(8).keys().lock());
            renewals.set(9, new Renewal(renewals.get(9).keys(), LockMode.EXCLUSIVE, "stale", 60_000));
            // the scripts are in the server's cache from here on (a first EVALSHA may be answered NOSCRIPT)
            for (CompletableFuture<Boolean> warm : server.renewAll(List.of(renewals.get(0), renewals.get(1),
                    renewals.get(renewals.size() - 1)))) {
                assertThat(warm.get(5, TimeUnit.SECONDS)).isTrue();
            }
            long scriptCallsBefore = scriptCalls();

            List<CompletableFuture<Boolean>> answers = server.renewAll(renewals);

            assertThat(answers).hasSize(renewals.size());
            for (int i = 0; i < renewals.size(); i++) {
                boolean expected = i != 7 && i != 8 && i != 9;
                assertThat(answers.get(i).get(5, TimeUnit.SECONDS)).as("renewal %d", i).isEqualTo(expected);
            }
            // three batches of exclusive leases (1000, 1000, 500) and the reader's own call
            assertThat(scriptCalls() - scriptCallsBefore).isEqualTo(4);
            assertThat(pttl(renewals.get(0).keys().lock())).isGreaterThan(50_000);
            assertThat(pttl(renewals.get(2_499).keys().lock())).isGreaterThan(50_000);
            assertThat(pttl(reader.readers())).isGreaterThan(50_000);
            assertThat(pttl(renewals.get(7).keys().lock())).as("not extended: not ours").isEqualTo(-1);
            assertThat(redis.server().command("GET", renewals.get(7).keys().lock())).isEqualTo("someone-else");
            assertThat(pttl(renewals.get(8).keys().lock())).as("not revived").isEqualTo(-2);
            assertThat(pttl(renewals.get(9).keys().lock())).as("a stale token extends nothing").isLessThanOrEqualTo(5_000);
        }
    }

    /** A call carries one lease for all its keys: renewals with another lease go in a call of their own. */
    @ParameterizedTest
    @EnumSource(EngineFixture.ServerKind.class)
    void renewalsWithDifferentLeasesEachGetTheirOwn(EngineFixture.ServerKind kind) throws Exception {
        try (EngineFixture fixture = new EngineFixture(redis.server(), kind)) {
            LockServer server = fixture.server(fixture.connectionFactory(), "lock:");
            String run = kind.name().toLowerCase() + "-leases-" + System.nanoTime();
            List<Renewal> renewals = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                LockKeys keys = LockKeys.of("lock:", run + "-" + i);
                assertThat(server.acquire(keys, LockMode.EXCLUSIVE, "token-" + i, 5_000, 0, "w" + i)
                    .get(5, TimeUnit.SECONDS).granted()).isTrue();
                // alternating leases, as two engines' locks would never be, but a lock with its own lease could
                renewals.add(new Renewal(keys, LockMode.EXCLUSIVE, "token-" + i, i % 2 == 0 ? 60_000 : 20_000));
            }
            server.renewAll(renewals.subList(0, 4)).forEach(CompletableFuture::join); // the batch script in the cache
            long scriptCallsBefore = scriptCalls();

            for (CompletableFuture<Boolean> answer : server.renewAll(renewals)) {
                assertThat(answer.get(5, TimeUnit.SECONDS)).isTrue();
            }

            assertThat(scriptCalls() - scriptCallsBefore).as("one call per lease").isEqualTo(2);
            for (int i = 0; i < renewals.size(); i++) {
                long ttl = pttl(renewals.get(i).keys().lock());
                if (i % 2 == 0) {
                    assertThat(ttl).as("lock %d", i).isBetween(50_001L, 60_000L);
                }
                else {
                    assertThat(ttl).as("lock %d", i).isBetween(10_001L, 20_000L);
                }
            }
        }
    }

    private static long pttl(String key) {
        return Long.parseLong(redis.server().command("PTTL", key).trim());
    }

    private static long scriptCalls() {
        long calls = 0;
        for (String line : redis.server().command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String field = line.substring(line.indexOf("calls=") + "calls=".length());
                calls += Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return calls;
    }
}
