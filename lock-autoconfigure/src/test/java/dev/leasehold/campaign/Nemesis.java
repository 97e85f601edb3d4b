package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.test.redis.TestRedisServer;

/**
 * Draws the faults of one run from the seed and injects them one after another: network faults at each
 * instance's seam (slow, lost or reset replies), faults in Redis (the lock key gone as after a failover,
 * the script cache flushed, Redis busy or paused, restarted empty), an instance shut down and started
 * again, and in the replica configuration the replica paused. Each fault is recorded with its window.
 */
final class Nemesis implements Runnable {

    /** Keeps Redis busy for ARGV[1] microseconds (as DEBUG SLEEP would; that command is off by default). */
    private static final String BUSY_SCRIPT = "local t = redis.call('TIME') local start = t[1] * 1000000 + t[2] "
            + "while true do local n = redis.call('TIME') if n[1] * 1000000 + n[2] - start > tonumber(ARGV[1]) then "
            + "return 1 end end";

    private final CampaignServers servers;

    private final List<CampaignInstance> instances;

    private final List<String> keys;

    private final History history;

    private final Random random;

    private final long deadlineNanos;

    private final String keyPrefix;

    Nemesis(CampaignServers servers, List<CampaignInstance> instances, List<String> keys, String keyPrefix,
            History history, long seed, long deadlineNanos) {
        this.servers = servers;
        this.instances = instances;
        this.keys = keys;
        this.keyPrefix = keyPrefix;
        this.history = history;
        this.random = new Random(seed);
        this.deadlineNanos = deadlineNanos;
    }

    @Override
    public void run() {
        // the last second runs clean, so the run ends with the system at rest
        while (System.nanoTime() < deadlineNanos - TimeUnit.SECONDS.toNanos(2)) {
            // calm stretches in between, where L1 judges
            rest(1000 + random.nextInt(3000));
            if (System.nanoTime() < deadlineNanos - TimeUnit.SECONDS.toNanos(2)) {
                try {
                    inject();
                }
                catch (RuntimeException ex) {
                    // a fault that could not be injected (a server still restarting, say) is skipped, not fatal
                    history.fault("not-injected: " + ex.getClass().getSimpleName(), String.valueOf(ex.getMessage()),
                            history.now(), history.now());
                }
            }
        }
    }

    private void inject() {
        List<String> menu = new ArrayList<>(List.of("delay", "lose", "reset", "delete-key", "delete-key", "script-flush",
                "busy", "pause", "restart-empty", "instance-restart"));
        if (servers.replica != null) {
            menu.add("replica-paused");
        }
        String kind = menu.get(random.nextInt(menu.size()));
        int server = random.nextInt(servers.servers.size());
        TestRedisServer redis = servers.servers.get(server);
        CampaignInstance instance = instances.get(random.nextInt(instances.size()));
        long start = history.now();
        String target = "redis-" + server;
        switch (kind) {
            case "delay", "lose", "reset" -> {
                target = instance.name;
                ChaosLockServer seam = instance.server();
                seam.set(ChaosLockServer.Mode.valueOf(kind.equals("delay") ? "DELAY" : kind.equals("lose") ? "LOSE" : "RESET"),
                        5 + random.nextInt(80));
                // now and then longer than a lease: renewals then fail until the lease estimate runs out
                rest(kind.equals("delay") ? 300 + random.nextInt(1200) : 100 + random.nextInt(random.nextInt(4) == 0 ? 2500 : 700));
                seam.heal();
            }
            case "delete-key" -> {
                LockKeys names = LockKeys.of(keyPrefix, keys.get(random.nextInt(keys.size())));
                target += " " + names.logicalKey();
                redis.command("DEL", names.lock(), names.readers());
            }
            case "script-flush" -> redis.command("SCRIPT", "FLUSH");
            case "busy" -> redis.command("EVAL", BUSY_SCRIPT, "0", String.valueOf(100_000 + random.nextInt(400_000)));
            case "pause" -> {
                redis.pause();
                rest(100 + random.nextInt(random.nextInt(4) == 0 ? 2000 : 700));
                redis.resume();
            }
            case "restart-empty" -> {
                redis.stop();
                redis.start();
                if (servers.replica != null) {
                    // no grant can be acknowledged before the replica has resynchronised from the emptied primary
                    // (WAIT answers 0 until then): the fault lasts until it has (found by the before/after runs)
                    awaitReplicaLinked(redis);
                }
            }
            case "instance-restart" -> {
                target = instance.name;
                instance.restart();
            }
            default -> {
                target = "replica";
                servers.replica.pause();
                rest(200 + random.nextInt(1000));
                servers.replica.resume();
            }
        }
        history.fault(kind, target, start, history.now(), TimeUnit.MILLISECONDS.toNanos(graceMillis(kind)));
    }

    /**
     * How long after a fault a waiter may still be held up by it: a reply that was lost leaves the key held until
     * its take-back lands; a release that was not sent leaves it to its lease; a deleted key or flushed scripts
     * make nobody wait.
     */
    private long graceMillis(String kind) {
        return switch (kind) {
            case "delete-key", "script-flush" -> 0;
            case "delay" -> 500;
            case "lose", "instance-restart", "replica-paused" -> 1000 + servers.settingsRedisTimeoutMillis();
            // a release that was never sent (reset) or failed (Redis away, reconnecting) leaves the key to its
            // lease: up to the longest fixed lease the workers take
            default -> CampaignWorker.LONGEST_LEASE_MILLIS + 500;
        };
    }

    /** Until the replica is linked to the restarted primary (the primary's new replication id) and in sync. */
    private void awaitReplicaLinked(TestRedisServer primary) {
        String replicationId = replicationField(primary.command("INFO", "replication"), "master_replid");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() - deadline < 0) {
            String info = servers.replica.command("INFO", "replication");
            if (info.contains("master_link_status:up") && replicationId.equals(replicationField(info, "master_replid"))) {
                return;
            }
            rest(50);
        }
    }

    private static String replicationField(String info, String name) {
        for (String line : info.split("\\r?\\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return "";
    }

    private static void rest(long millis) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
    }
}
