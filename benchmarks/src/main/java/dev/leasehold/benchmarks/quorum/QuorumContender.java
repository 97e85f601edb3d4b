package dev.leasehold.benchmarks.quorum;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNode;
import dev.leasehold.engine.quorum.QuorumNodes;
import dev.leasehold.engine.redis.LettuceLockServer;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** One client of a lock implementation over some of the benchmark's nodes; thread-safe. */
public interface QuorumContender extends AutoCloseable {

    /** Takes the lock, runs the section, releases; false when the wait ran out. */
    boolean cycle(String key, Duration wait, Runnable section) throws Exception;

    @Override
    void close();

    /** The starter's defaults (30 s watchdog lease, 2 s Redis timeout, 0.01 drift factor). */
    LockEngineSettings SETTINGS = new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofSeconds(2),
            Duration.ofSeconds(2));

    /** Leasehold on one server, or in quorum mode on several (the nodes on one set of client resources). */
    static QuorumContender leasehold(List<String> urls) {
        return leasehold(urls, true);
    }

    /**
     * @param sharedResources whether the quorum's nodes share one set of Lettuce client resources, as the starter
     * builds them; false: each node's factory makes its own (event loops, timers), as
     * {@link QuorumNodes#connectionFactory(io.lettuce.core.RedisURI, Duration)} does for a hand-built quorum
     */
    static QuorumContender leasehold(List<String> urls, boolean sharedResources) {
        List<LettuceConnectionFactory> factories = new ArrayList<>();
        LockServer server;
        if (urls.size() == 1) {
            LettuceConnectionFactory factory = QuorumNodes.connectionFactory(QuorumNodes.parse(urls.get(0)),
                    SETTINGS.redisTimeout());
            factories.add(factory);
            server = new LettuceLockServer(factory, SETTINGS.keyPrefix());
        }
        else {
            // as the starter builds it: one factory per node, on client resources the nodes share
            io.lettuce.core.resource.ClientResources resources = sharedResources ? QuorumNodes.sharedResources() : null;
            List<QuorumNode> nodes = new ArrayList<>();
            for (String url : urls) {
                var uri = QuorumNodes.parse(url);
                nodes.add(QuorumNode.onLettuce(QuorumNodes.name(uri),
                        QuorumNodes.connectionFactory(uri, SETTINGS.redisTimeout(), resources), SETTINGS.keyPrefix(), true));
            }
            server = new QuorumLockServer(nodes, SETTINGS.redisTimeout(), SETTINGS.leaseTime(), 0.01);
            if (resources != null) {
                ((QuorumLockServer) server).closing(() -> resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS));
            }
        }
        DefaultLockEngine engine = new DefaultLockEngine(server, SETTINGS, new LockObserver() {
        });
        return new QuorumContender() {

            @Override
            public boolean cycle(String key, Duration wait, Runnable section) {
                Optional<LockHandle> handle = engine.tryLock(key, wait, null);
                if (handle.isEmpty()) {
                    return false;
                }
                try (LockHandle held = handle.get()) {
                    section.run();
                }
                return true;
            }

            @Override
            public void close() {
                engine.close();
                server.close();
                factories.forEach(LettuceConnectionFactory::destroy);
            }
        };
    }

    /** Redisson's RedissonRedLock over one Redisson client per node, watchdog lease (its defaults). */
    static QuorumContender redissonRedLock(List<String> urls) {
        List<RedissonClient> clients = new ArrayList<>();
        for (String url : urls) {
            Config config = new Config();
            config.useSingleServer().setAddress(url);
            clients.add(Redisson.create(config));
        }
        return new QuorumContender() {

            @Override
            @SuppressWarnings("deprecation")
            public boolean cycle(String key, Duration wait, Runnable section) throws InterruptedException {
                RLock[] locks = clients.stream().map(client -> client.getLock(key)).toArray(RLock[]::new);
                RedissonRedLock lock = new RedissonRedLock(locks);
                if (!lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    return false;
                }
                try {
                    section.run();
                }
                finally {
                    lock.unlock();
                }
                return true;
            }

            @Override
            public void close() {
                clients.forEach(RedissonClient::shutdown);
            }
        };
    }
}
