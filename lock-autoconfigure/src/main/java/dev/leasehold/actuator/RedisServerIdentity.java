package dev.leasehold.actuator;

import java.util.Properties;

import dev.leasehold.engine.server.ServerVersion;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Which server the locks are on, such as {@code valkey 8.0.1} or {@code redis 7.0.15}: asked once with
 * {@code INFO server} after a successful health check, then kept (and logged once). Valkey reports
 * {@code redis_version:7.2.4} whatever its own version, so {@code server_name} and {@code valkey_version} decide.
 */
final class RedisServerIdentity {

    private static final Logger logger = LoggerFactory.getLogger(RedisServerIdentity.class);

    private final RedisConnectionFactory connectionFactory;

    private volatile @Nullable String identity;

    RedisServerIdentity(RedisConnectionFactory connectionFactory) {
        this.connectionFactory = connectionFactory;
    }

    /** The server's name and version, or null when it has not answered yet. */
    @Nullable String get() {
        String known = identity;
        if (known != null) {
            return known;
        }
        try (RedisConnection connection = connectionFactory.getConnection()) {
            Properties info = connection.serverCommands().info("server");
            known = info == null ? null : describe(info);
        }
        catch (RuntimeException ex) {
            logger.debug("Could not ask Redis which server it is", ex);
            return null;
        }
        if (known != null) {
            identity = known;
            logger.info("Leasehold's locks are on {}", known);
        }
        return known;
    }

    /**
     * {@code <server_name> <version>} from {@code INFO server} (on a Cluster, one node's fields, prefixed with
     * its address); Redis before 7.2 has no {@code server_name}.
     */
    static @Nullable String describe(Properties info) {
        ServerVersion server = ServerVersion.of(field(info, "server_name"), field(info, "valkey_version"),
                field(info, "redis_version"));
        return server == null ? null : server.toString();
    }

    private static @Nullable String field(Properties info, String name) {
        String value = info.getProperty(name);
        if (value != null) {
            return value.trim();
        }
        for (String key : info.stringPropertyNames()) {
            if (key.endsWith("." + name)) {
                return info.getProperty(key).trim();
            }
        }
        return null;
    }
}
