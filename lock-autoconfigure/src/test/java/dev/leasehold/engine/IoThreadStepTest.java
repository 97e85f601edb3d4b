package dev.leasehold.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.test.redis.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A step that follows a reply runs on the driver's I/O thread (a waiter withdrawing after its last try did,
 * in the campaign). When the server has no connection yet it must not connect there: with one I/O thread the
 * connect waits for the very thread it blocks, and the event loop hung for good (the campaign's run never
 * ended). It fails like a refused connection instead, and the next step from another thread connects.
 */
class IoThreadStepTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void aStepOnTheDriversIoThreadNeverConnectsThere() throws Exception {
        ClientResources oneIoThread = DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1).build();
        LettuceConnectionFactory first = factory(oneIoThread);
        LettuceConnectionFactory second = factory(oneIoThread);
        LettuceLockServer answering = new LettuceLockServer(first, "lock:");
        LettuceLockServer notConnected = new LettuceLockServer(second, "lock:");
        RedisClient client = RedisClient.create(oneIoThread, RedisURI.create(redis.server().url()));
        StatefulRedisConnection<String, String> slowReply = client.connect();
        try {
            LockKeys keys = LockKeys.of("lock:", "io-thread");
            // the next step is made in a reply's callback, on the single I/O thread: the reply (a BLPOP that times
            // out after a second) certainly comes after the callback is registered
            CompletableFuture<Boolean> next = slowReply.async().blpop(1, "nothing-here").toCompletableFuture()
                .thenCompose(ignored -> notConnected.isLocked(keys));
            Throwable failure = next.handle((value, error) -> error).get(10, TimeUnit.SECONDS);
            assertThat(LockServerException.unwrap(failure)).isInstanceOf(LockServerException.class)
                .hasMessageContaining("not connecting on the driver's I/O thread");
            // from an application thread it connects, and the I/O thread still serves both
            assertThat(notConnected.isLocked(keys).get(10, TimeUnit.SECONDS)).isFalse();
            assertThat(answering.isLocked(keys).get(10, TimeUnit.SECONDS)).isFalse();
        }
        finally {
            slowReply.close();
            client.shutdown(0, 2, TimeUnit.SECONDS);
            notConnected.close();
            answering.close();
            second.destroy();
            first.destroy();
            oneIoThread.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private static LettuceConnectionFactory factory(ClientResources resources) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(redis.server().host(), redis.server().port()),
                LettuceClientConfiguration.builder().clientResources(resources).commandTimeout(Duration.ofSeconds(5)).build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
