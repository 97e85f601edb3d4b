package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.engine.Await;
import dev.leasehold.logs.ExpectedLog;
import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application stops the engine, then the Redis connection factory (LockEngineLifecycle's order), while the
 * subscription connection is still being opened on a server that does not answer. close() gives up waiting after
 * 5 s and interrupts its thread, which ends the wait but not Lettuce's connect: before the fix, the connection
 * it opened once Redis answered stayed open with nobody to close it (until the client's shutdown). Nothing of
 * it may be logged at ERROR either.
 */
class SubscriptionShutdownTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void closingWhileTheSubscriptionConnectionOpensEndsTheOpeningBeforeTheClientShutsDown() throws Exception {
        TestRedisServer server = redis.server();
        // Spring Data Redis's defaults, as Spring Boot leaves them
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(server.host(), server.port()), LettuceClientConfiguration.defaultConfiguration());
        factory.afterPropertiesSet();
        factory.start();
        ReleaseSubscriptions subscriptions = new ReleaseSubscriptions(factory, "lock:");
        try (ExpectedLog log = ExpectedLog.capture(Logger.ROOT_LOGGER_NAME)) {
            server.pause(); // connections are accepted (the kernel's backlog) but nothing answers
            CompletableFuture<Void> subscribed = subscriptions.subscribe("lock:{k}:released");
            Await.until(Duration.ofSeconds(10), "the subscription connection opening", SubscriptionShutdownTest::opening);

            // the handshake waits for the command timeout (60 s), longer than close() waits before it interrupts
            subscriptions.close();
            server.resume();
            Await.until(Duration.ofSeconds(5), "no connection of the closed subscriptions left on the server",
                    () -> connectionsBesidesOurs(server) == 0);
            factory.destroy();

            assertThat(subscribed).failsWithin(Duration.ofSeconds(10));
            assertThat(log.messages()).as("logged while shutting down").noneMatch(line -> line.startsWith("ERROR"));
        }
        finally {
            server.resume();
            subscriptions.close();
            factory.destroy();
        }
    }

    /** The server's client connections, but the one asking and the test support's MONITOR. */
    private static long connectionsBesidesOurs(TestRedisServer server) {
        return server.command("CLIENT", "LIST").lines()
            .filter(line -> !line.contains("cmd=client") && !line.contains("cmd=monitor"))
            .count();
    }

    /** Whether a thread of the subscriptions is inside Lettuce's connect. */
    private static boolean opening() {
        return Thread.getAllStackTraces().entrySet().stream()
            .filter(entry -> entry.getKey().getName().startsWith("leasehold-subscription"))
            .anyMatch(entry -> Arrays.stream(entry.getValue())
                .anyMatch(frame -> frame.getMethodName().startsWith("connectPubSub")));
    }
}
