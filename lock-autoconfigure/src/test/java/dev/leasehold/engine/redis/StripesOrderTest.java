package dev.leasehold.engine.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntUnaryOperator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stripes of the RedisTemplate server keep a key's steps in call order while Cluster slots change masters
 * under them (a take-back must never overtake the acquire it undoes). A seeded random run: callers send steps for
 * their keys, some of them long (a call to a master that is slow), while slots move between masters at random
 * moments and the stripes learn it; every key's steps must run in the order they were called, and slots must really
 * have changed stripes meanwhile. The order is a property of the stripes alone, so no Redis is involved (the
 * Cluster tests run the stripes on a real Cluster). A failing seed replays with {@code -Dleasehold.test.seed=N}.
 */
@Timeout(60)
class StripesOrderTest {

    private static final int SLOTS = 16384;

    private static final int MASTERS = 3;

    @Test
    void stepsOfAKeyRunInCallOrderWhileSlotsChangeMasters() throws Exception {
        long seed = Long.getLong("leasehold.test.seed", System.nanoTime());
        Random random = new Random(seed);
        int[] owner = new int[SLOTS];
        for (int slot = 0; slot < SLOTS; slot++) {
            owner[slot] = slot * MASTERS / SLOTS;
        }
        // a master now and then replaced by a new node (a new id): its stripes retire once no slot points at them
        int[] generation = new int[MASTERS];
        Stripes stripes = new Stripes(2, true, () -> snapshot(owner, generation), Duration.ofHours(1));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (stripes.masterCount() < MASTERS && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000);
            }
            assertThat(stripes.masterCount()).as("masters learnt at start").isEqualTo(MASTERS);

            int callers = 4;
            int keysPerCaller = 12;
            int stepsPerCaller = 1500;
            List<List<String>> keys = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                List<String> own = new ArrayList<>();
                for (int k = 0; k < keysPerCaller; k++) {
                    own.add("order-" + c + "-" + k);
                }
                keys.add(own);
            }
            Map<String, AtomicInteger> lastRun = new ConcurrentHashMap<>();
            List<String> outOfOrder = new CopyOnWriteArrayList<>();
            CountDownLatch ran = new CountDownLatch(callers * stepsPerCaller);
            AtomicBoolean calling = new AtomicBoolean(true);
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                List<String> own = keys.get(c);
                Random callerRandom = new Random(seed + 1 + c);
                threads.add(new Thread(() -> {
                    Map<String, Integer> sent = new HashMap<>();
                    for (int i = 0; i < stepsPerCaller; i++) {
                        String key = own.get(callerRandom.nextInt(own.size()));
                        int number = sent.merge(key, 1, Integer::sum) - 1;
                        // one step in ten is long (a master that answers slowly): its slot stays busy meanwhile
                        long workNanos = callerRandom.nextInt(10) == 0 ? 200_000 + callerRandom.nextInt(2_000_000) : 0;
                        stripes.execute(key, () -> {
                            int last = lastRun.computeIfAbsent(key, ignored -> new AtomicInteger(-1)).getAndSet(number);
                            if (last != number - 1) {
                                outOfOrder.add(key + ": step " + number + " ran after step " + last);
                            }
                            if (workNanos > 0) {
                                LockSupport.parkNanos(workNanos);
                            }
                            ran.countDown();
                        });
                        if (callerRandom.nextInt(4) == 0) {
                            LockSupport.parkNanos(callerRandom.nextInt(200_000));
                        }
                    }
                }, "caller-" + c));
            }
            // the slots of the callers' keys change masters at random moments, and the stripes learn it
            List<Integer> keySlots = keys.stream().flatMap(List::stream).map(ClusterSlotHashUtil::calculateSlot).toList();
            AtomicInteger movesSeen = new AtomicInteger();
            AtomicInteger replaced = new AtomicInteger();
            Thread topologyChanges = new Thread(() -> {
                while (calling.get()) {
                    synchronized (owner) {
                        if (random.nextInt(20) == 0) {
                            generation[random.nextInt(MASTERS)]++;
                            replaced.incrementAndGet();
                        }
                        for (int n = 1 + random.nextInt(4); n > 0; n--) {
                            int slot = keySlots.get(random.nextInt(keySlots.size()));
                            owner[slot] = (owner[slot] + 1 + random.nextInt(MASTERS - 1)) % MASTERS;
                        }
                    }
                    IntUnaryOperator before = stripes.masters();
                    int[] groupsBefore = keySlots.stream().mapToInt(before::applyAsInt).toArray();
                    stripes.refresh();
                    IntUnaryOperator after = stripes.masters();
                    for (int i = 0; i < groupsBefore.length; i++) {
                        if (after.applyAsInt(keySlots.get(i)) != groupsBefore[i]) {
                            movesSeen.incrementAndGet();
                        }
                    }
                    LockSupport.parkNanos(random.nextInt(3_000_000));
                }
            }, "topology-changes");
            threads.forEach(Thread::start);
            topologyChanges.start();
            for (Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(40));
            }
            assertThat(ran.await(20, TimeUnit.SECONDS)).as("every step ran (seed %d)", seed).isTrue();
            calling.set(false);
            topologyChanges.join(5_000);
            assertThat(outOfOrder).as("steps run out of call order (seed %d)", seed).isEmpty();
            assertThat(movesSeen.get()).as("slots that changed stripes while steps ran (seed %d)", seed).isPositive();
            // once every slot has reached its master, the stripes of replaced masters are gone (a step counts down
            // the latch just before its slot's count: a slot may move only at the next refresh)
            long settled = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            do {
                stripes.refresh();
            }
            while (stripes.masterCount() != MASTERS && System.nanoTime() < settled && sleep());
            assertThat(stripes.masterCount()).as("masters with stripes after the last refresh (seed %d)", seed)
                .isEqualTo(MASTERS);
            System.out.println("StripesOrderTest seed " + seed + ": " + movesSeen.get() + " slot moves seen, "
                    + replaced.get() + " masters replaced");
        }
        finally {
            stripes.shutdown(Duration.ofSeconds(5));
        }
    }

    private static boolean sleep() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        return true;
    }

    private static Map<String, int[]> snapshot(int[] owner, int[] generation) {
        synchronized (owner) {
            Map<String, List<Integer>> slots = new HashMap<>();
            for (int slot = 0; slot < SLOTS; slot++) {
                String master = "master-" + owner[slot] + "." + generation[owner[slot]];
                slots.computeIfAbsent(master, ignored -> new ArrayList<>()).add(slot);
            }
            Map<String, int[]> masters = new HashMap<>();
            slots.forEach((master, list) -> masters.put(master, list.stream().mapToInt(Integer::intValue).toArray()));
            return masters;
        }
    }
}
