package dev.leasehold.engine;

import dev.leasehold.engine.EngineFixture.ServerKind;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The engine's core behaviour, run once per {@link ServerKind}: it must be the same on the Lettuce server
 * (Spring Boot's default client) and on the RedisTemplate server (Jedis, or any other factory). A test that
 * only makes sense on one kind says why and skips the other.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(ServerKind.class)
abstract class EveryServerEngineTest extends RealRedisEngineTest {

    @Parameter
    ServerKind kind;

    @Override
    ServerKind kind() {
        return kind;
    }
}
