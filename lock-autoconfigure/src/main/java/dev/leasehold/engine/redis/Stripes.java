package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntUnaryOperator;

import dev.leasehold.engine.support.StarterThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The single threads on which {@link RedisTemplateLockServer} runs its blocking round trips: a key always on the
 * same one, so its steps run in the order they were called (a take-back always after the acquire it undoes).
 * <p>
 * On a Redis Cluster every master gets stripes of its own, so a master that stops answering holds up only the steps
 * of its own keys: with stripes shared by all masters, a few calls blocked on it (each up to the client's timeout)
 * held every stripe, and the renewals of the masters that answered queued behind them until their leases ran out.
 * Which master serves a slot is learnt off the hot path, from Spring Data's view of the Cluster, every
 * {@link #REFRESH} on a thread of its own (which alone waits when a node does not answer). A slot moves to another
 * master's stripes only at a moment when none of its steps is queued or running, so steps of one key never
 * overtake each other across the move; until its master is known, a slot's steps run on the shared stripes.
 */
final class Stripes {

    private static final Log logger = LogFactory.getLog(Stripes.class);

    static final Duration REFRESH = Duration.ofSeconds(1);

    private static final int SLOTS = 16384;

    /** A slot whose stripes are being changed: steps of the slot wait the few instructions it takes. */
    private static final int MOVING = -1;

    private final RedisConnectionFactory connectionFactory;

    private final int perGroup;

    private final StarterThreads threads = new StarterThreads("leasehold-redis");

    private final StarterThreads topologyThreads = new StarterThreads("leasehold-redis-topology");

    /** Off a Cluster every key's; on a Cluster those of slots whose master is not known yet. */
    private final ExecutorService[] shared;

    /** On a Cluster, each master's stripes, by node id, made when the master is first seen. */
    private final Map<String, Group> groups = new ConcurrentHashMap<>();

    /** On a Cluster: the stripes of each slot's master (null: the shared ones); guarded by {@link #steps}. */
    private final Group[] groupOfSlot = new Group[SLOTS];

    /** Steps of each slot queued or running, or MOVING while its group changes. */
    private final AtomicIntegerArray steps = new AtomicIntegerArray(SLOTS);

    private final ScheduledExecutorService topology;

    /** Whether the factory talks to a Cluster: then steps go by slot. Set by the first refresh that can tell. */
    private volatile boolean cluster;

    private record Group(int number, ExecutorService[] stripes) {
    }

    Stripes(RedisConnectionFactory connectionFactory, int perGroup) {
        this.connectionFactory = connectionFactory;
        this.perGroup = perGroup;
        this.shared = newStripes();
        this.topology = Executors.newSingleThreadScheduledExecutor(topologyThreads);
        topology.scheduleWithFixedDelay(this::refresh, 0, REFRESH.toMillis(), TimeUnit.MILLISECONDS);
    }

    private ExecutorService[] newStripes() {
        ExecutorService[] stripes = new ExecutorService[perGroup];
        for (int i = 0; i < perGroup; i++) {
            stripes[i] = Executors.newSingleThreadExecutor(threads);
        }
        return stripes;
    }

    /**
     * Runs {@code step} on the stripe of {@code key}.
     * @throws RejectedExecutionException when closed
     */
    void execute(String key, Runnable step) {
        if (!cluster) {
            stripe(shared, key).execute(step);
            return;
        }
        int slot = ClusterSlotHashUtil.calculateSlot(key);
        for (int count = steps.get(slot); count == MOVING || !steps.compareAndSet(slot, count, count + 1);
                count = steps.get(slot)) {
            Thread.onSpinWait();
        }
        Group group = groupOfSlot[slot]; // read after the count went up: its writer finished before
        try {
            stripe(group != null ? group.stripes : shared, key).execute(new SlotStep(step, slot));
        }
        catch (RuntimeException ex) {
            steps.decrementAndGet(slot);
            throw ex;
        }
    }

    /** A step of a Cluster slot: counted until it ran, so the slot does not change stripes under it. */
    private final class SlotStep implements Runnable {

        final Runnable step;

        private final int slot;

        SlotStep(Runnable step, int slot) {
            this.step = step;
            this.slot = slot;
        }

        @Override
        public void run() {
            try {
                step.run();
            }
            finally {
                steps.decrementAndGet(slot);
            }
        }
    }

    private static ExecutorService stripe(ExecutorService[] stripes, String key) {
        return stripes[Math.floorMod(key.hashCode(), stripes.length)];
    }

    /**
     * On a Cluster, which master serves each slot (a small number per master, as {@link ScriptedLockServer#masters()}
     * wants), as far as known; null off a Cluster or before the first refresh.
     */
    IntUnaryOperator masters() {
        if (!cluster) {
            return null;
        }
        return slot -> {
            Group group = groupOfSlot[slot]; // a racy read is fine: a batch only goes to its first key's master
            return group != null ? group.number : -1 - slot;
        };
    }

    /** Masters known to serve slots (0 off a Cluster or before the first refresh). */
    int masterCount() {
        return cluster ? groups.size() : 0;
    }

    private void refresh() {
        try (RedisConnection connection = connectionFactory.getConnection()) {
            if (!(connection instanceof RedisClusterConnection clusterConnection)) {
                topology.shutdown(); // one server, or Sentinel: the shared stripes are all there is
                return;
            }
            List<Integer> waiting = new ArrayList<>();
            for (RedisClusterNode node : clusterConnection.clusterGetNodes()) {
                if (!node.isMaster() || node.getSlotRange() == null || node.getSlotRange().getSlots().isEmpty()) {
                    continue;
                }
                String id = node.getId() != null ? node.getId() : node.asString();
                Group group = groups.computeIfAbsent(id, ignored -> new Group(groups.size(), newStripes()));
                for (int slot : node.getSlotRange().getSlotsArray()) {
                    if (groupOfSlot[slot] != group && !move(slot, group)) {
                        waiting.add(slot);
                    }
                }
            }
            cluster = true;
            if (!waiting.isEmpty() && logger.isDebugEnabled()) {
                logger.debug(waiting.size() + " slots keep their stripes until their steps in flight ended");
            }
        }
        catch (RuntimeException ex) {
            // no answer now (a node down, the factory stopping): keep what is known, ask again next time
            logger.debug("Could not learn the Cluster's topology: " + ex);
        }
    }

    /** Moves a slot to its master's stripes if none of its steps is queued or running now (else: next refresh). */
    private boolean move(int slot, Group group) {
        if (!steps.compareAndSet(slot, 0, MOVING)) {
            return false;
        }
        groupOfSlot[slot] = group;
        steps.set(slot, 0); // publishes the write above to the next step of the slot
        return true;
    }

    /**
     * Stops learning the topology, lets the steps already queued run (the engine's last releases) for up to
     * {@code patience}, and returns those that never ran; the stripes' threads have ended when it returns.
     */
    List<Runnable> shutdown(Duration patience) {
        topologyThreads.stop(topology, patience, true);
        List<ExecutorService> all = new ArrayList<>(List.of(shared));
        groups.values().forEach(group -> all.addAll(List.of(group.stripes)));
        all.forEach(ExecutorService::shutdown);
        long deadline = System.nanoTime() + patience.toNanos();
        List<Runnable> neverRun = new ArrayList<>();
        for (ExecutorService stripe : all) {
            try {
                if (!stripe.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    neverRun.addAll(stripe.shutdownNow());
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                neverRun.addAll(stripe.shutdownNow());
            }
        }
        for (ExecutorService stripe : all) {
            threads.stop(stripe, Duration.ofMillis(100), true); // ended above: joins their threads
        }
        return neverRun.stream().map(each -> each instanceof SlotStep slotStep ? slotStep.step : each).toList();
    }
}
