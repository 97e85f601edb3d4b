package dev.leasehold.explorer;

import java.util.List;
import java.util.Random;

import dev.leasehold.campaign.History;
import dev.leasehold.engine.server.LockKeys;

/**
 * The {@link Explorer}'s faults: Redis restarts empty, a connection is cut off for a while, a lock key is lost (with a
 * replica: a failover), the server's clock steps ahead (aimed only: {@link ReaderAims}); in a quorum run, on a minority
 * of the nodes ({@link QuorumRun}).
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
        if (redis.replica != null) {
            redis.replica.resynced(); // the replica of a primary restarted empty is made empty too
        }
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

    /** With a replica, the key is lost only by a real failover: what the replica had not received. */
    void loseKey(String key) {
        if (redis.replica != null) {
            failover();
            return;
        }
        if (quorum != null) {
            quorum.loseKey(history, key);
            return;
        }
        world.trace("NEMESIS the lock of " + key + " is lost (as by a failover)");
        long start = history.now();
        redis.lose(LockKeys.of("lock:", key));
        history.fault("delete-key", "redis " + key, start, history.now());
    }

    /**
     * The replica is promoted ({@link SimReplica#failover}): the writes it had not received are lost, and every
     * connection is made again (what was on its way gets no reply, subscriptions are made again). Without replica
     * acknowledgement the keys whose holders or leases it changed are lost keys ("failover-lost": the checker excuses an
     * untold older holder, as for a restart, but not a token that goes back); with it, nothing is excused: a grant the
     * replica acknowledged must survive.
     */
    void failover() {
        world.trace("NEMESIS failover");
        long start = history.now();
        List<List<String>> before = keys.stream().map(this::whatHolds).toList();
        List<String> lost = redis.replica.failover(keys);
        for (int i = 0; i < keys.size(); i++) {
            List<String> after = new java.util.ArrayList<>(whatHolds(keys.get(i)));
            after.removeAll(before.get(i));
            broughtBack(keys.get(i), after);
        }
        instances.forEach(instance -> instance.connection.restarted());
        history.fault("failover", "redis", start, history.now());
        if (!redis.replica.acknowledged) {
            lost.forEach(key -> history.fault("failover-lost", "redis " + key, start, history.now()));
        }
    }

    /** The key's lock value, read leases and queue entries now (owner tokens and queue members). */
    private List<String> whatHolds(String key) {
        LockKeys names = LockKeys.of("lock:", key);
        List<String> holds = new java.util.ArrayList<>(redis.liveReaders(names));
        holds.addAll(redis.queued(names));
        String value = redis.lockValue(names);
        if (value != null) {
            holds.add(value.startsWith("queue-grant:") ? value.substring("queue-grant:".length())
                    : value.replaceFirst("^released:", "").replaceFirst("[@#][0-9]+$", ""));
        }
        return holds;
    }

    /**
     * What a failover brought back (a lock or read lease whose release, a queue entry or grant whose withdrawal or
     * claim the replica had not received) stays until it expires, as what a write a fault dropped leaves (documented):
     * excused in the leftover checks as such ({@link DroppedWrites}).
     */
    private void broughtBack(String key, List<String> back) {
        for (Client.Instance instance : instances) {
            for (String each : back) {
                if (each.matches(".*\\|[WR](@\\d+)?") && each.startsWith(instance.engine.instanceId())) {
                    instance.connection.dropped.queueWrite(key, true, "|W", true);
                }
                else if (instance.connection.ownsToken(each)) {
                    instance.connection.dropped.releaseDropped(each);
                }
            }
        }
    }
}
