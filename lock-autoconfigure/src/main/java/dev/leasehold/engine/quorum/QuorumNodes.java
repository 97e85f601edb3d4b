package dev.leasehold.engine.quorum;

import java.net.URI;
import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Builds the Spring Data Redis connection factory of one quorum node from its URL. */
public final class QuorumNodes {

    private QuorumNodes() {
    }

    /**
     * Parses {@code redis://[[user]:password@]host:port[/db]} or {@code rediss://...} (TLS).
     * @throws IllegalArgumentException when the URL does not parse or is not a single-server URL
     */
    public static RedisURI parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the URL is empty");
        }
        String trimmed = url.trim();
        if (!trimmed.startsWith("redis://") && !trimmed.startsWith("rediss://")) {
            throw new IllegalArgumentException("'" + redact(trimmed) + "' does not start with redis:// or rediss://");
        }
        RedisURI uri;
        try {
            uri = RedisURI.create(trimmed);
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException("'" + redact(trimmed) + "' does not parse: " + ex.getMessage(), ex);
        }
        if (uri.getHost() == null || uri.getHost().isBlank() || uri.getSentinelMasterId() != null) {
            throw new IllegalArgumentException("'" + redact(trimmed) + "' names no single Redis server");
        }
        return uri;
    }

    /**
     * The client resources the nodes of one quorum share (event loops, timers). The caller shuts them down after
     * destroying the nodes' factories.
     */
    public static ClientResources sharedResources() {
        // Lettuce's default event loop count: one loop for all nodes made no measurable difference (issue 22)
        return DefaultClientResources.create();
    }

    /** {@code host:port} of a node URL, for logs, metrics tags and the actuator (no credentials). */
    public static String name(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    /** The URL without its password, for error messages. */
    public static String redact(String url) {
        try {
            URI parsed = URI.create(url);
            if (parsed.getUserInfo() != null) {
                return url.replace(parsed.getRawUserInfo() + "@", "***@");
            }
        }
        catch (RuntimeException ex) {
            // not even a URI: say nothing of what could be a password
            return url.contains("@") ? "***@" + url.substring(url.lastIndexOf('@') + 1) : url;
        }
        return url;
    }

    /**
     * A started connection factory for one node: user, password, database and TLS from the URL; every
     * command bounded by {@code commandTimeout}. The caller destroys it.
     */
    public static LettuceConnectionFactory connectionFactory(RedisURI uri, Duration commandTimeout) {
        return connectionFactory(uri, commandTimeout, null);
    }

    /**
     * The same, on shared client resources (event loops and timers; one set for all nodes of a quorum
     * instead of one per node), which the caller shuts down after destroying the factories.
     */
    public static LettuceConnectionFactory connectionFactory(RedisURI uri, Duration commandTimeout,
            @Nullable ClientResources resources) {
        RedisConfiguration configuration = LettuceConnectionFactory.createRedisConfiguration(uri);
        LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
            .commandTimeout(commandTimeout)
            .clientName("leasehold-quorum")
            // a node whose connection is down (killed, restarting, unreachable) fails a step at once instead of
            // queueing it for leasehold.redis-timeout: the quorum's outcome is then known from the live nodes
            // alone, and nothing queued runs late on a server that came back empty
            .clientOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        if (resources != null) {
            client.clientResources(resources);
        }
        if (uri.isSsl()) {
            LettuceClientConfiguration.LettuceSslClientConfigurationBuilder ssl = client.useSsl();
            if (!uri.isVerifyPeer()) {
                ssl.disablePeerVerification();
            }
            client = ssl.and();
        }
        LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration, client.build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
