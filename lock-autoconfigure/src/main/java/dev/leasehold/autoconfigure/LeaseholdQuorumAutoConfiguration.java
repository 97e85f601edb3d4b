package dev.leasehold.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNode;
import dev.leasehold.engine.quorum.QuorumNodes;
import dev.leasehold.metrics.QuorumMetrics;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Quorum mode: with {@code leasehold.quorum.nodes} set, the {@link LockServer} runs every step on a
 * majority of those independent servers, each reached through a Lettuce connection factory of its own
 * built from its URL; {@code spring.data.redis} then holds no lock keys. One or two nodes, or a URL that
 * does not parse, stop the start-up with a message naming the property.
 */
@AutoConfiguration(before = LeaseholdAutoConfiguration.class)
@ConditionalOnClass(LettuceConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "leasehold.enabled", matchIfMissing = true)
@Conditional(LeaseholdQuorumAutoConfiguration.OnQuorumNodes.class)
@EnableConfigurationProperties(LeaseholdProperties.class)
public class LeaseholdQuorumAutoConfiguration {

    static final String NODES = "leasehold.quorum.nodes";

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockServer.class)
    QuorumLockServer leaseholdQuorumLockServer(LeaseholdProperties properties) {
        LeaseholdProperties.Quorum quorum = properties.getQuorum();
        List<String> urls = quorum.getNodes();
        if (urls.size() < 3) {
            throw new InvalidConfigurationPropertyValueException(NODES, String.join(",", urls.stream().map(QuorumNodes::redact).toList()),
                    "Quorum mode needs 3 or more independent Redis servers (a majority of 1 or 2 survives no failure); "
                            + "list at least 3, or remove " + NODES + " to lock on spring.data.redis");
        }
        double drift = quorum.getClockDriftFactor();
        if (drift < 0 || drift >= 0.5) {
            throw new InvalidConfigurationPropertyValueException("leasehold.quorum.clock-drift-factor", drift,
                    "must be at least 0 and below 0.5");
        }
        java.time.Duration retention = quorum.getFenceRetention();
        if (retention != null && retention.compareTo(java.time.Duration.ofMinutes(1)) < 0) {
            // tokens stay increasing while the clients' clocks differ by less than the retention: seconds are
            // within reach of a host whose NTP failed
            throw new InvalidConfigurationPropertyValueException("leasehold.quorum.fence-retention", retention,
                    "must be at least a minute (tokens stay increasing while the clients' clocks differ by less); "
                            + "leave it unset to keep the counters for ever");
        }
        List<RedisURI> uris = new ArrayList<>();
        for (int i = 0; i < urls.size(); i++) {
            try {
                uris.add(QuorumNodes.parse(urls.get(i)));
            }
            catch (IllegalArgumentException ex) {
                throw new InvalidConfigurationPropertyValueException(NODES + "[" + i + "]",
                        QuorumNodes.redact(String.valueOf(urls.get(i))), ex.getMessage()
                                + "; expected redis://[[user]:password@]host:port[/db] or rediss://...");
            }
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < uris.size(); i++) {
            if (!seen.add(QuorumNodes.name(uris.get(i)))) {
                throw new InvalidConfigurationPropertyValueException(NODES + "[" + i + "]",
                        QuorumNodes.redact(urls.get(i)), QuorumNodes.name(uris.get(i))
                                + " is listed twice; the nodes of a quorum must be independent servers");
            }
        }
        List<QuorumNode> nodes = new ArrayList<>();
        // one set of event loops and timers for all nodes, not one per node
        ClientResources resources = QuorumNodes.sharedResources();
        try {
            for (RedisURI uri : uris) {
                LettuceConnectionFactory factory = QuorumNodes.connectionFactory(uri, properties.getRedisTimeout(),
                        resources);
                nodes.add(QuorumNode.onLettuce(QuorumNodes.name(uri), factory, properties.getKeyPrefix(), true));
            }
            return new QuorumLockServer(nodes, properties.getRedisTimeout(), properties.getLeaseTime(), drift)
                .closing(() -> resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS))
                .fairQueue(properties.engineFairQueue())
                .fenceRetention(retention);
        }
        catch (RuntimeException ex) {
            nodes.forEach(QuorumNode::close);
            resources.shutdown();
            throw ex;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterBinder.class)
    static class QuorumMetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        QuorumMetrics leaseholdQuorumMetrics(ObjectProvider<QuorumLockServer> server) {
            return new QuorumMetrics(server::getIfAvailable);
        }
    }

    /** Matches when {@code leasehold.quorum.nodes} lists anything (in any property source format). */
    static class OnQuorumNodes extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> nodes = Binder.get(context.getEnvironment())
                .bind(NODES, Bindable.listOf(String.class))
                .orElse(List.of());
            return nodes.isEmpty() ? ConditionOutcome.noMatch(NODES + " is not set")
                    : ConditionOutcome.match(NODES + " lists " + nodes.size() + " servers");
        }
    }
}
