package dev.leasehold.explorer;

import java.util.List;
import java.util.Random;

import dev.leasehold.campaign.History;
import dev.leasehold.engine.server.LockKeys;

/**
 * The {@link Explorer}'s faults: Redis restarts empty, a connection is cut off for a while, a lock key is lost, the
 * server's clock steps ahead (aimed only: {@link ReaderAims}); in a quorum run, on a minority of the nodes
 * ({@link QuorumRun}).
 */
final class Nemesis {

    private final SimWorld world;

    private final SimRedis redis;

    private final History history;

    private final List<Client.Instance> instances;

    private final List<String> keys;

    private final Random random;

    private final RunConfig config;

    /** A quorum run's node faults (a minority of the nodes), or null. */
    private final QuorumRun quorum;

    Nemesis(SimWorld world, SimRedis redis, History history, List<Client.Instance> instances, List<String> keys,
            Random random, RunConfig config, QuorumRun quorum) {
        this.quorum = quorum;
        this.world = world;
        this.redis = redis;
        this.history = history;
        this.instances = instances;
        this.keys = keys;
        this.random = random;
        this.config = config;
    }

    void restart() {
        if (quorum != null) {
            quorum.restart(history, instances);
            return;
        }
        world.trace("NEMESIS Redis restarts empty");
        long start = history.now();
        redis.flushAll();
        instances.forEach(instance -> instance.connection.restarted());
        history.fault("restart-empty", "redis", start, history.now());
    }

    /** One instance's connection carries nothing for a while (a network partition, a long GC pause of Redis). */
    void cutOff() {
        if (quorum != null) {
            quorum.cutOff(history, instances, config);
            return;
        }
        Client.Instance instance = instances.get(random.nextInt(instances.size()));
        long nanos = (long) (random.nextDouble() * config.lease().toNanos() * 1.5);
        instance.connection.pausedUntil = world.now() + nanos;
        world.trace(String.format(java.util.Locale.ROOT, "NEMESIS %s's connection is cut off for %.1f ms", instance.name,
                nanos / 1e6));
        history.fault("cut-off", instance.name, history.now(), history.now() + nanos, config.redisTimeout().toNanos());
    }

    /**
     * The server's clock steps ahead by {@code millis} (an NTP step on Redis's host): leases end early there, before
     * their holders' estimates say (documented: a lease relies on clocks that do not jump; fencing tokens still grow).
     */
    void stepClock(long millis) {
        world.trace("NEMESIS Redis's clock steps " + millis + " ms ahead");
        long start = history.now();
        redis.stepClockAhead(millis);
        history.fault("clock-step", "redis", start, history.now());
    }

    void loseKey() {
        loseKey(keys.get(random.nextInt(keys.size())));
    }

    void loseKey(String key) {
        if (quorum != null) {
            quorum.loseKey(history, key);
            return;
        }
        world.trace("NEMESIS the lock of " + key + " is lost (as by a failover)");
        long start = history.now();
        redis.lose(LockKeys.of("lock:", key));
        history.fault("delete-key", "redis " + key, start, history.now());
    }
}
