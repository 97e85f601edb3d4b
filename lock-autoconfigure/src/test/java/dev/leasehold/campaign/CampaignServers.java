package dev.leasehold.campaign;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.leasehold.engine.EngineFixture;
import dev.leasehold.engine.EngineFixture.ServerKind;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.quorum.QuorumFixture;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * The Redis servers of one campaign configuration, started on free loopback ports so the nemesis may
 * pause, restart and flush them, and a new {@link LockServer} on them for each instance (its own
 * connections, as another JVM would have).
 */
final class CampaignServers implements AutoCloseable {

    /** The configurations: the same campaign on each. */
    enum Config {
        /** One Redis, Lettuce (Spring Boot's default client). */
        LETTUCE,
        /** One Redis, pooled Jedis through the template server. */
        JEDIS,
        /** One Redis with a replica, every lease-extending write acknowledged by it (WAIT). */
        REPLICA_ACK,
        /** Three independent Redis servers, each lock on a majority. */
        QUORUM
    }

    static final Duration DRIVER_TIMEOUT = Duration.ofSeconds(2);

    final Config config;

    /** The servers the locks live on (the nemesis' targets). */
    final List<TestRedisServer> servers = new ArrayList<>();

    /** The replica of {@link Config#REPLICA_ACK}, or null. */
    final TestRedisServer replica;

    private final EngineFixture single;

    private final QuorumFixture quorum;

    CampaignServers(Config config) {
        this.config = config;
        if (config == Config.QUORUM) {
            quorum = new QuorumFixture(3);
            servers.addAll(quorum.servers);
            single = null;
            replica = null;
            return;
        }
        quorum = null;
        TestRedisServer redis = TestRedisServers.startOwn(List.of(), Map.of());
        servers.add(redis);
        single = new EngineFixture(redis, config == Config.JEDIS ? ServerKind.JEDIS : ServerKind.LETTUCE);
        replica = config == Config.REPLICA_ACK
                ? TestRedisServers.startOwn(List.of("--replicaof", redis.host(), String.valueOf(redis.port())), Map.of())
                : null;
    }

    /** A new server for one instance: its own connections. */
    LockServer newServer(LockEngineSettings settings) {
        return switch (config) {
            case QUORUM -> quorum.quorum(settings);
            case REPLICA_ACK -> single.track(new LettuceLockServer(
                    (LettuceConnectionFactory) single.connectionFactory(DRIVER_TIMEOUT, null, null),
                    settings.keyPrefix(), 1, Duration.ofMillis(100)));
            default -> single.server(single.connectionFactory(DRIVER_TIMEOUT, null, null), settings.keyPrefix());
        };
    }

    long settingsRedisTimeoutMillis() {
        return EngineCampaign.SETTINGS.redisTimeout().toMillis();
    }

    /** Whether fencing counters live forever by design (quorum mode), so L2 does not count them. */
    boolean countersNeverExpire() {
        return config == Config.QUORUM;
    }

    @Override
    public void close() {
        if (single != null) {
            single.close();
            servers.forEach(TestRedisServer::close);
        }
        if (quorum != null) {
            quorum.close();
        }
        if (replica != null) {
            replica.close();
        }
    }
}
