package dev.leasehold.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;

import dev.leasehold.campaign.EngineCampaign;
import dev.leasehold.campaign.History;
import dev.leasehold.campaign.History.Verdict;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.test.fault.FaultProxy;
import dev.leasehold.test.redis.TestRedisSentinel;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;

/**
 * One process-level run (Jepsen-style): three worker JVMs ({@link FaultWorker}) take one key in a loop and
 * do a fenced read-modify-write on a separate resource Redis, while a nemesis drawn from the seed pauses
 * and kills workers, pauses Redis and restarts it empty, slows, black-holes and resets the workers'
 * connections, fails Sentinel over, and loses quorum nodes. The sections the workers recorded go through
 * the same {@link HistoryChecker} as the engine level, and through the store's own checks ({@link SectionLog}).
 */
final class ProcessCampaign {

    enum Config {
        /** One Redis, each worker behind its own fault proxy. */
        SINGLE,
        /** Sentinel (a primary, a replica): a failover can lose a grant, which fencing must catch. */
        SENTINEL,
        /** The same with every lease-extending write acknowledged by the replica. */
        SENTINEL_ACK,
        /** Three independent Redis servers, each lock on a majority. */
        QUORUM
    }

    private static final Duration LEASE = Duration.ofSeconds(2);

    private ProcessCampaign() {
    }

    static EngineCampaign.Run run(Config config, long seed, long seconds) {
        Random random = new Random(seed);
        History history = new History();
        List<TestRedisServer> owned = new ArrayList<>();
        TestRedisSentinel sentinel = null;
        TestRedisServer resource = TestRedisServers.startOwn(List.of(), Map.of());
        owned.add(resource);
        FaultScenario scenario = new FaultScenario("campaign-" + config.name().toLowerCase() + "-" + seed, resource);
        List<TestRedisServer> lockServers = new ArrayList<>();
        try {
            List<String> settings = new ArrayList<>(FaultSuiteTest.settings(LEASE, Duration.ofMillis(40), Duration.ofMillis(20)));
            settings.add("--fault.run-limit=" + (seconds + 120) + "s");
            switch (config) {
                case SINGLE -> {
                    TestRedisServer redis = TestRedisServers.startOwn(List.of(), Map.of());
                    owned.add(redis);
                    lockServers.add(redis);
                    scenario.startBehindProxies(redis, 3, settings);
                }
                case SENTINEL, SENTINEL_ACK -> {
                    sentinel = TestRedisSentinel.start();
                    lockServers.addAll(sentinel.nodes());
                    if (config == Config.SENTINEL_ACK) {
                        settings.add("--leasehold.replica-ack.replicas=1");
                    }
                    scenario.start(settings, perWorker(List.of("--spring.data.redis.sentinel.master=" + TestRedisSentinel.MASTER_NAME,
                            "--spring.data.redis.sentinel.nodes=" + sentinel.sentinel().host() + ":" + sentinel.sentinel().port())));
                }
                case QUORUM -> {
                    for (int i = 0; i < 3; i++) {
                        TestRedisServer node = TestRedisServers.startOwn(List.of(), Map.of());
                        owned.add(node);
                        lockServers.add(node);
                    }
                    String nodes = lockServers.stream().map(TestRedisServer::url).collect(Collectors.joining(","));
                    scenario.start(settings, perWorker(List.of("--leasehold.quorum.nodes=" + nodes)));
                }
            }
            scenario.awaitSections(6, Duration.ofSeconds(90));
            long origin = scenario.now();
            long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
            Nemesis nemesis = new Nemesis(config, scenario, lockServers, sentinel, random, history, origin);
            while (System.nanoTime() < deadline - Duration.ofSeconds(4).toNanos()) {
                FaultScenario.sleep(300 + random.nextInt(1500));
                try {
                    nemesis.inject();
                }
                catch (RuntimeException ex) {
                    // a fault that could not be carried out (a promotion that did not come, say) is recorded, not fatal
                    long at = (scenario.now() - origin) * 1000;
                    history.fault("not-injected: " + ex.getClass().getSimpleName(), String.valueOf(ex.getMessage()), at, at);
                }
            }
            FaultScenario.sleep(Math.max(0, Duration.ofNanos(deadline - System.nanoTime()).toMillis()));
            SectionLog log = scenario.stop();
            return check(config, seed, seconds, history, log, origin, scenario, lockServers);
        }
        finally {
            scenario.close();
            if (sentinel != null) {
                sentinel.close();
            }
            owned.forEach(TestRedisServer::close);
        }
    }

    private static Map<String, List<String>> perWorker(List<String> own) {
        Map<String, List<String>> perWorker = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            perWorker.put("w" + i, own);
        }
        return perWorker;
    }

    private static EngineCampaign.Run check(Config config, long seed, long seconds, History history, SectionLog log,
            long origin, FaultScenario scenario, List<TestRedisServer> lockServers) {
        for (SectionLog.Section section : log.sections) {
            Verdict verdict = switch (section.verdict()) {
                case "A" -> Verdict.ACCEPTED;
                case "R" -> Verdict.WRITE_REFUSED;
                default -> Verdict.READ_REFUSED;
            };
            long granted = (section.grantMicros() - origin) * 1000;
            // the call began before the worker asked; it knows the grant only when the call returned
            long called = (section.callMicros() - origin) * 1000;
            history.section(new History.Section(history.nextId(), section.worker(), FaultScenario.KEY, false,
                    section.token(), false, "fenced read-modify-write", called, granted,
                    (section.endMicros() - origin) * 1000, 0, verdict, true, section.heldAfter(), section.lostEvent()));
            history.operation("section");
        }
        List<String> leftovers = new ArrayList<>();
        scenario.workers.exitCodes().forEach((id, code) -> {
            if (code != null && code != 0 && code != 137) {
                leftovers.add("worker " + id + " exited with " + code);
            }
        });
        for (TestRedisServer server : lockServers) {
            try {
                String keys = server.command("KEYS", "*");
                if (keys.contains("queue") && !server.command("ZCARD", "lock:{" + FaultScenario.KEY + "}:queue").equals("0")) {
                    leftovers.add("fair-queue entries after every worker stopped on " + server.url());
                }
            }
            catch (RuntimeException ex) {
                // a node the last fault left down (a killed Sentinel primary): nothing to read there
            }
        }
        HistoryChecker.Findings findings = new HistoryChecker(3_600_000).check(history, leftovers);
        List<HistoryChecker.Violation> all = new ArrayList<>(findings.violations());
        long end = history.now();
        log.check().violations().forEach(violation -> all.add(new HistoryChecker.Violation(end, "store: " + violation)));
        return new EngineCampaign.Run("process", config.name(), seed, seconds, history,
                new HistoryChecker.Findings(all, findings.overlaps(), findings.toldLost(), findings.maxFreeMillis()));
    }

    /** The process level's faults, drawn from the seed. */
    private record Nemesis(Config config, FaultScenario scenario, List<TestRedisServer> lockServers,
            TestRedisSentinel sentinel, Random random, History history, long origin) {

        void inject() {
            List<String> menu = new ArrayList<>(List.of("worker-pause", "worker-pause", "worker-kill", "redis-pause"));
            switch (config) {
                case SINGLE -> menu.addAll(List.of("latency", "blackhole", "reset", "redis-restart-empty"));
                case QUORUM -> menu.addAll(List.of("redis-restart-empty", "redis-restart-empty"));
                default -> menu.addAll(List.of("failover", "partitioned-failover"));
            }
            String kind = menu.get(random.nextInt(menu.size()));
            String worker = scenario.ids().get(random.nextInt(scenario.ids().size()));
            TestRedisServer redis = sentinel != null ? sentinel.currentPrimaryNode()
                    : lockServers.get(random.nextInt(lockServers.size()));
            long start = scenario.now();
            String target = worker;
            switch (kind) {
                case "worker-pause" -> {
                    scenario.workers.pause(worker);
                    FaultScenario.sleep(200 + random.nextInt(3500));
                    scenario.workers.resume(worker);
                }
                case "worker-kill" -> {
                    scenario.workers.kill(worker);
                    FaultScenario.sleep(300);
                    scenario.restart(worker);
                }
                case "latency", "blackhole", "reset" -> {
                    FaultProxy proxy = scenario.proxies.get(worker);
                    if (kind.equals("reset")) {
                        proxy.drop();
                    }
                    else {
                        if (kind.equals("latency")) {
                            proxy.latency(Duration.ofMillis(20 + random.nextInt(150)));
                        }
                        else {
                            proxy.blackhole();
                        }
                        FaultScenario.sleep(300 + random.nextInt(2700));
                        proxy.heal();
                        proxy.latency(Duration.ZERO);
                    }
                }
                case "redis-pause" -> {
                    target = redis.url();
                    redis.pause();
                    FaultScenario.sleep(200 + random.nextInt(1300));
                    redis.resume();
                }
                case "redis-restart-empty" -> {
                    target = redis.url();
                    redis.stop();
                    redis.start();
                }
                default -> {
                    target = "primary " + redis.url();
                    if (kind.equals("partitioned-failover")) {
                        // the replica cut off first: grants made meanwhile exist on the primary alone, and the
                        // failover loses them (a double grant without replica acknowledgement, caught by fencing)
                        sentinel.cutReplication(redis);
                        FaultScenario.sleep(300 + random.nextInt(1000));
                    }
                    String before = sentinel.currentPrimary();
                    TestRedisServer killed = sentinel.killPrimary();
                    sentinel.awaitPromotion(before, Duration.ofSeconds(30));
                    sentinel.rejoin(killed);
                    sentinel.awaitSettled(Duration.ofSeconds(30));
                }
            }
            history.fault(kind, target, (start - origin) * 1000, (scenario.now() - origin) * 1000);
        }
    }
}
