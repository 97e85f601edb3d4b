package dev.leasehold.benchmarks.cost;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.benchmarks.contenders.Contender;
import dev.leasehold.benchmarks.contenders.FloorContender;
import dev.leasehold.benchmarks.contenders.LeaseholdContender;
import dev.leasehold.benchmarks.contenders.Redis;
import dev.leasehold.benchmarks.contenders.RedissonContender;
import dev.leasehold.benchmarks.quorum.QuorumContender;
import dev.leasehold.test.redis.TestRedisServer;

/** The contenders the cost benchmark compares, each with the servers it uses (whose counters it is charged). */
final class CostContenders {

    /** One lock+unlock cycle on a key (empty critical section); false when the lock was not granted. */
    interface Cycle extends AutoCloseable {

        boolean run(String key) throws Exception;

        @Override
        void close();
    }

    record Entry(String name, List<TestRedisServer> servers, Supplier<Cycle> start) {
    }

    static final String FLOOR = "floor";

    static final String LEASEHOLD = "leasehold";

    static final String REDISSON = "redisson";

    static final String NODE = "leasehold-1-node";

    static final String QUORUM_3 = "leasehold-quorum-3";

    static final String QUORUM_3_UNSHARED = "leasehold-quorum-3-unshared";

    static final List<String> IDS = List.of(FLOOR, LEASEHOLD, REDISSON, NODE, QUORUM_3, QUORUM_3_UNSHARED);

    private static final Duration WAIT = Duration.ofSeconds(5);

    private CostContenders() {
    }

    /** By id: the first server for every single-server contender, the first three for the quorum. */
    static Map<String, Entry> on(List<TestRedisServer> servers, List<String> ids) {
        Redis first = new Redis(servers.get(0).host(), servers.get(0).port());
        List<String> urls = servers.stream().map(TestRedisServer::url).toList();
        Map<String, Entry> all = new LinkedHashMap<>();
        all.put(FLOOR, new Entry("Floor: Lettuce SET NX PX + EVALSHA", servers.subList(0, 1),
                () -> of(new FloorContender(first))));
        all.put(LEASEHOLD, new Entry("Leasehold LockService", servers.subList(0, 1),
                () -> of(new LeaseholdContender(first))));
        all.put(REDISSON, new Entry("Redisson RLock", servers.subList(0, 1), () -> of(new RedissonContender(first))));
        // the quorum benchmark's one-server figure: a node's connection factory (leasehold.quorum.* settings)
        all.put(NODE, new Entry("Leasehold, 1 server (quorum node settings)", servers.subList(0, 1),
                () -> of(QuorumContender.leasehold(urls.subList(0, 1)))));
        all.put(QUORUM_3, new Entry("Leasehold quorum of 3", servers.subList(0, 3),
                () -> of(QuorumContender.leasehold(urls.subList(0, 3)))));
        all.put(QUORUM_3_UNSHARED, new Entry("Leasehold quorum of 3, client resources per node", servers.subList(0, 3),
                () -> of(QuorumContender.leasehold(urls.subList(0, 3), false))));
        Map<String, Entry> chosen = new LinkedHashMap<>();
        for (String id : ids) {
            Entry entry = all.get(id);
            if (entry == null) {
                throw new IllegalArgumentException("Unknown contender '" + id + "'; known: " + IDS);
            }
            chosen.put(id, entry);
        }
        return chosen;
    }

    private static Cycle of(Contender contender) {
        return new Cycle() {

            @Override
            public boolean run(String key) throws Exception {
                return contender.withLock(key, LockMode.EXCLUSIVE, WAIT, () -> {
                });
            }

            @Override
            public void close() {
                contender.close();
            }
        };
    }

    private static Cycle of(QuorumContender contender) {
        return new Cycle() {

            @Override
            public boolean run(String key) throws Exception {
                return contender.cycle(key, WAIT, () -> {
                });
            }

            @Override
            public void close() {
                contender.close();
            }
        };
    }
}
