package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntUnaryOperator;

import dev.leasehold.engine.support.StarterThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

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

    /** Which masters serve which slots, asked off the hot path; null on a server that is no Cluster. */
    interface Topology {

        /** Each master's id and the slots it serves; null when the server is no Cluster (then never asked again). */
        @Nullable Map<String, int[]> mastersAndSlots();
    }

    private final int perGroup;

    private final StarterThreads threads = new StarterThreads("leasehold-redis");

    private final StarterThreads topologyThreads = new StarterThreads("leasehold-redis-topology");

    /** Off a Cluster every key's; on a Cluster those of slots whose master is not known yet. */
    private final ExecutorService[] shared;

    /** On a Cluster, each master's stripes, by node id, made when the master is first seen. */
    private final Map<String, Group> groups = new ConcurrentHashMap<>();

    /** Numbers the masters' groups (never reused, so two masters never look like one to a batch of renewals). */
    private final AtomicInteger groupNumbers = new AtomicInteger();

    /** Set by shutdown (under this object's monitor): a late refresh makes no stripes. */
    private boolean closed;

    /** Stripes of masters that left, ending: joined at shutdown. */
    private final List<ExecutorService> retired = new CopyOnWriteArrayList<>();

    /** On a Cluster: the stripes of each slot's master (null: the shared ones); guarded by {@link #steps}. */
    private final Group[] groupOfSlot = new Group[SLOTS];

    /** Steps of each slot queued or running, or MOVING while its group changes. */
    private final AtomicIntegerArray steps = new AtomicIntegerArray(SLOTS);

    private final Topology topology;

    private final ScheduledExecutorService refresher;

    /**
     * Whether steps are counted per Cluster slot (the factory talks to a Cluster, or may: a factory of unknown kind).
     * Fixed from the start, so that every step that may still run when a slot first moves was counted.
     */
    private final boolean bySlot;

    /** Whether the server is a Cluster: false off one from the start, else null until the topology first answers. */
    private volatile @Nullable Boolean cluster;

    private record Group(int number, ExecutorService[] stripes) {
    }

    /**
     * @param bySlot whether the server may be a Cluster (steps are then counted per slot, and {@code topology} asked)
     * @param refresh how often the topology is asked
     */
    Stripes(int perGroup, boolean bySlot, Topology topology, Duration refresh) {
        this.perGroup = perGroup;
        this.bySlot = bySlot;
        this.cluster = bySlot ? null : Boolean.FALSE;
        this.shared = newStripes();
        this.topology = topology;
        this.refresher = Executors.newSingleThreadScheduledExecutor(topologyThreads);
        if (bySlot) {
            refresher.scheduleWithFixedDelay(this::refresh, 0, refresh.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** The stripes of a {@link RedisTemplateLockServer} on {@code connectionFactory}. */
    static Stripes of(RedisConnectionFactory connectionFactory, int perGroup) {
        return new Stripes(perGroup, mayBeCluster(connectionFactory), () -> mastersAndSlots(connectionFactory), REFRESH);
    }

    /** Whether a factory may talk to a Cluster: Jedis and Lettuce factories say; of any other kind, maybe. */
    private static boolean mayBeCluster(RedisConnectionFactory factory) {
        if (JEDIS_PRESENT && ClientFactories.isJedis(factory)) {
            return ClientFactories.jedisOnCluster(factory);
        }
        if (LETTUCE_PRESENT && ClientFactories.isLettuce(factory)) {
            return ClientFactories.lettuceOnCluster(factory);
        }
        return true;
    }

    private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.Jedis",
            Stripes.class.getClassLoader());

    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
            Stripes.class.getClassLoader());

    /** Only loaded when the client it names is on the class path. */
    private static final class ClientFactories {

        static boolean isJedis(RedisConnectionFactory factory) {
            return factory instanceof JedisConnectionFactory;
        }

        static boolean jedisOnCluster(RedisConnectionFactory factory) {
            return ((JedisConnectionFactory) factory).isRedisClusterAware();
        }

        static boolean isLettuce(RedisConnectionFactory factory) {
            return factory instanceof LettuceConnectionFactory;
        }

        static boolean lettuceOnCluster(RedisConnectionFactory factory) {
            return ((LettuceConnectionFactory) factory).isClusterAware();
        }
    }

    /** From Spring Data's view of the Cluster (Jedis caches it for 100 ms; else a CLUSTER NODES on a node). */
    private static @Nullable Map<String, int[]> mastersAndSlots(RedisConnectionFactory connectionFactory) {
        try (RedisConnection connection = connectionFactory.getConnection()) {
            if (!(connection instanceof RedisClusterConnection clusterConnection)) {
                return null; // one server, or Sentinel: the shared stripes are all there is
            }
            Map<String, int[]> masters = new HashMap<>();
            for (RedisClusterNode node : clusterConnection.clusterGetNodes()) {
                if (node.isMaster() && node.getSlotRange() != null && !node.getSlotRange().getSlots().isEmpty()) {
                    masters.put(node.getId() != null ? node.getId() : node.asString(), node.getSlotRange().getSlotsArray());
                }
            }
            return masters;
        }
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
        if (!bySlot) {
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
    @Nullable IntUnaryOperator masters() {
        if (groups.isEmpty()) {
            return null;
        }
        return slot -> {
            Group group = groupOfSlot[slot]; // a racy read is fine: a batch only goes to its first key's master
            return group != null ? group.number : -1 - slot;
        };
    }

    /** Whether the server may be a Cluster: false once known not to be (the factory said so, or the topology). */
    boolean mayBeCluster() {
        return !Boolean.FALSE.equals(cluster);
    }

    /** Masters known to serve slots (0 off a Cluster or before the first refresh). */
    int masterCount() {
        return groups.size();
    }

    /** Asks the topology, and moves the slots whose master changed (those with steps in flight: next time). */
    void refresh() {
        Map<String, int[]> masters;
        try {
            masters = topology.mastersAndSlots(); // I/O, outside the monitor: shutdown never waits for it
        }
        catch (RuntimeException ex) {
            // no answer now (a node down, the factory stopping): keep what is known, ask again next time
            logger.debug("Could not learn the Cluster's topology: " + ex);
            return;
        }
        if (masters == null) {
            cluster = false;
            refresher.shutdown(); // no Cluster: the shared stripes are all there is
            return;
        }
        learn(masters);
        cluster = true;
    }

    private synchronized void learn(Map<String, int[]> masters) {
        if (closed) {
            return; // shut down meanwhile (a refresh that outlasted its patience): no new stripes
        }
        int waiting = 0;
        for (Map.Entry<String, int[]> master : masters.entrySet()) {
            Group group = groups.computeIfAbsent(master.getKey(),
                    ignored -> new Group(groupNumbers.getAndIncrement(), newStripes()));
            for (int slot : master.getValue()) {
                if (groupOfSlot[slot] != group && !move(slot, group)) {
                    waiting++;
                }
            }
        }
        if (waiting > 0 && logger.isDebugEnabled()) {
            logger.debug(waiting + " slots keep their stripes until their steps in flight ended");
        }
        retireGone(masters);
    }

    /**
     * The stripes of a master that left the Cluster (a failover, a node replaced) once no slot points at them any
     * more: no new step reaches them, so they end after the steps they still have (and are joined at shutdown).
     */
    private void retireGone(Map<String, int[]> masters) {
        for (Iterator<Map.Entry<String, Group>> each = groups.entrySet().iterator(); each.hasNext();) {
            Map.Entry<String, Group> entry = each.next();
            if (!masters.containsKey(entry.getKey()) && !servesASlot(entry.getValue())) {
                each.remove();
                for (ExecutorService stripe : entry.getValue().stripes) {
                    stripe.shutdown();
                    retired.add(stripe);
                }
            }
        }
    }

    private boolean servesASlot(Group group) {
        for (Group each : groupOfSlot) {
            if (each == group) {
                return true;
            }
        }
        return false;
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
        topologyThreads.stop(refresher, patience, true);
        List<ExecutorService> all;
        synchronized (this) { // from now on no refresh makes or retires stripes
            closed = true;
            all = new ArrayList<>(List.of(shared));
            groups.values().forEach(group -> all.addAll(List.of(group.stripes)));
            all.addAll(retired);
        }
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
