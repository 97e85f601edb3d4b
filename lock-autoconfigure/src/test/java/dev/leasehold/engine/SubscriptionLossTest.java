package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.EngineFixture.ServerKind;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis ACL users and a subscription connection that Redis closes and will not let back in: a release
 * missed meanwhile must cost a waiter about a second, not the holder's lease.
 */
@Timeout(120)
@ParameterizedClass(name = "{0}")
@EnumSource(ServerKind.class)
class SubscriptionLossTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Parameter
    ServerKind kind;

    private EngineFixture fixture;

    @BeforeEach
    void setUp() {
        fixture = new EngineFixture(redis.server(), kind);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
        redis.server().command("ACL", "DELUSER", "app");
    }

    /** The ACL rule the README documents for a Leasehold user, with or without channel rights. */
    private DefaultLockEngine engineAsAclUser(boolean channels) {
        redis.server().commands(java.util.List.of(new String[] { "ACL", "DELUSER", "app" },
                new String[] { "ACL", "SETUSER", "app", "on", ">secret", "resetkeys", "~lock:*",
                        "resetchannels", channels ? "&lock:*" : "resetchannels", "-@all", "+@connection",
                        "+evalsha", "+eval", "+subscribe", "+unsubscribe", "+psubscribe", "+punsubscribe", "+get",
                        "+set", "+del", "+exists", "+pttl", "+pexpire", "+time", "+publish", "+zadd", "+zrem",
                        "+zrange", "+zcount", "+zscore", "+zremrangebyscore" }));
        return fixture.engine(fixture.server(fixture.connectionFactory(Duration.ofSeconds(5), "app", "secret"), "lock:"),
                EngineFixture.fastSettings());
    }

    @Test
    void theDocumentedAclRuleIsEnough() {
        DefaultLockEngine app = engineAsAclUser(true);
        DefaultLockEngine other = fixture.engine();
        LockHandle held = other.lock("acl", Duration.ZERO);
        CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = app.lock("acl", Duration.ofSeconds(20))) {
                return System.nanoTime();
            }
        });
        Await.until(Duration.ofSeconds(5), "the waiter sleeps until a release", () -> app.waitingCount() == 1);
        long releasedAt = System.nanoTime();
        held.close();
        long handOffMillis = (acquiredAt.join() - releasedAt) / 1_000_000;
        // woken by the release message: far below the holder's 30 s lease and the 1 s re-check
        assertThat(handOffMillis).isLessThan(900);
        try (LockHandle handle = app.lock("acl", Duration.ZERO)) {
            assertThat(other.isLocked("acl")).isTrue();
        }
        assertThat(other.isLocked("acl")).isFalse();
    }

    @Test
    void withoutChannelRightsReleasesStillReleaseAndWaitersLookAgainEverySecond() {
        DefaultLockEngine app = engineAsAclUser(false);
        DefaultLockEngine other = fixture.engine();
        LockHandle mine = app.lock("no-channels", Duration.ZERO);
        mine.close();
        // the script deletes the key although PUBLISH is refused, and says so instead of failing
        assertThat(redis.server().command("EXISTS", "lock:{no-channels}")).isEqualTo("0");

        LockHandle held = other.lock("no-channels", Duration.ZERO);
        CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = app.lock("no-channels", Duration.ofSeconds(25))) {
                return System.nanoTime();
            }
        });
        Await.until(Duration.ofSeconds(10), "the waiter waits", () -> app.waitingCount() == 1);
        long releasedAt = System.nanoTime();
        held.close();
        long waitedMillis = (acquiredAt.join() - releasedAt) / 1_000_000;
        assertThat(waitedMillis).as("a re-check within about a second, not the 30 s lease").isLessThan(5000);
    }

    @Test
    void aReleaseMissedWhileRedisRefusedTheResubscriptionCostsSecondsNotTheLease() throws Exception {
        DefaultLockEngine app = engineAsAclUser(true);
        DefaultLockEngine other = fixture.engine();
        LockHandle held = other.lock("cut", Duration.ZERO);
        CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = app.lock("cut", Duration.ofSeconds(25))) {
                return System.nanoTime();
            }
        });
        Await.until(Duration.ofSeconds(5), "the waiter sleeps until a release", () -> app.waitingCount() == 1);

        // Redis closes the subscriber when its channel rights go, and refuses it when it subscribes again
        redis.server().command("ACL", "SETUSER", "app", "resetchannels");
        long releasedAt = System.nanoTime();
        held.close();
        long waitedMillis = (acquiredAt.get(30, TimeUnit.SECONDS) - releasedAt) / 1_000_000;
        assertThat(waitedMillis).as("before the fix: the holder's whole 30 s lease").isLessThan(5000);

        // rights back: the waiter is woken by releases again
        redis.server().command("ACL", "SETUSER", "app", "&lock:*");
        LockHandle again = other.lock("cut", Duration.ZERO);
        CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = app.lock("cut", Duration.ofSeconds(25))) {
                return System.nanoTime();
            }
        });
        Await.until(Duration.ofSeconds(10), "the waiter waits again", () -> app.waitingCount() == 1);
        Await.until(Duration.ofSeconds(10), "the subscription is confirmed again",
                () -> kind == ServerKind.JEDIS ? !"0".equals(redis.server().command("PUBSUB", "NUMPAT").trim())
                        : redis.server().command("PUBSUB", "CHANNELS", "lock:{cut}:released").contains("lock:{cut}:released"));
        long releasedAgainAt = System.nanoTime();
        again.close();
        assertThat((second.get(30, TimeUnit.SECONDS) - releasedAgainAt) / 1_000_000).isLessThan(900);
    }
}
