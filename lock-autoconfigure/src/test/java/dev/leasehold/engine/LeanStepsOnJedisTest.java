package dev.leasehold.engine;

/** {@link LeanStepsTest} through Spring Data Redis's template on Jedis (each key's steps on its stripe). */
class LeanStepsOnJedisTest extends LeanStepsTest {

    @Override
    EngineFixture.ServerKind kind() {
        return EngineFixture.ServerKind.JEDIS;
    }
}
