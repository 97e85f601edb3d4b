package dev.leasehold.benchmarks.scale;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.LockHandle;

/**
 * Item 5's slot migration under load: the slot of a hot key moves to another master (IMPORTING / MIGRATING,
 * MIGRATE of its keys, NODE everywhere, as {@code redis-cli --cluster reshard} does) while 2 clients x 2 threads
 * take turns on the hot key, 4 threads lock and release over 10,000 other keys, and {@value #HELD} locks in the
 * same slot are held with a watchdog lease (renewed through the move). Counts what reaches callers: errors
 * (exceptions, waits that ran out), locks reported lost or no longer held, and two holders of the hot key at once.
 */
final class SlotMigrationPart {

    static final String[] METRICS = { "keys moved", "migration ms", "hot-key grants during move", "errors",
            "locks lost", "exclusion violations", "held locks kept" };

    static final int HELD = 20;

    private SlotMigrationPart() {
    }

    /** {@code engine} and {@code second}: two clients on the cluster, warmed up. */
    static double[] measure(ClusterNodes nodes, ClusterEngine engine, ClusterEngine second, double seconds)
            throws Exception {
        long lostBefore = engine.lost() + second.lost();
        String run = "m" + Long.toString(System.nanoTime(), 36) + "-";
        String hotKey = run + "hot";
        int slot = ClusterNodes.slotOf(hotKey);
        List<LockHandle> held = new ArrayList<>();
        for (String key : ClusterNodes.keysInSlot(run + "held-", slot, HELD)) {
            held.add(engine.hold(key));
        }
        AtomicLong errors = new AtomicLong();
        AtomicLong hotGrants = new AtomicLong();
        AtomicInteger inSection = new AtomicInteger();
        AtomicLong violations = new AtomicLong();
        long loadMillis = (long) Math.max(300, seconds * 1000);
        long deadline = System.nanoTime() + 3 * loadMillis * 1_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (ClusterEngine client : List.of(engine, second)) {
            for (int t = 0; t < 2; t++) {
                threads.add(ClusterPart.daemon(() -> {
                    while (System.nanoTime() < deadline) {
                        try (LockHandle handle = client.hold(hotKey)) {
                            if (inSection.incrementAndGet() != 1) {
                                violations.incrementAndGet();
                            }
                            hotGrants.incrementAndGet();
                            Thread.sleep(1);
                            inSection.decrementAndGet();
                        }
                        catch (InterruptedException ex) {
                            return;
                        }
                        catch (RuntimeException ex) {
                            errors.incrementAndGet();
                        }
                    }
                }));
            }
        }
        for (int t = 0; t < 4; t++) {
            int thread = t;
            threads.add(ClusterPart.daemon(() -> {
                for (int i = thread; System.nanoTime() < deadline; i = (i + 4) % ClusterPart.KEYS) {
                    try {
                        engine.hold(run + i).close();
                    }
                    catch (RuntimeException ex) {
                        errors.incrementAndGet();
                    }
                }
            }));
        }
        // a third of the load before the move, the move, the rest after it
        Thread.sleep(loadMillis);
        long grantsBefore = hotGrants.get();
        long started = System.nanoTime();
        long moved = nodes.migrate(slot);
        double migrationMillis = (System.nanoTime() - started) / 1e6;
        long grantsDuring = hotGrants.get() - grantsBefore;
        for (Thread thread : threads) {
            thread.join();
        }
        long kept = held.stream().filter(LockHandle::isHeld).count();
        for (LockHandle handle : held) {
            try {
                handle.close();
            }
            catch (RuntimeException ex) {
                errors.incrementAndGet();
            }
        }
        long lost = engine.lost() + second.lost() - lostBefore;
        return new double[] { moved, migrationMillis, grantsDuring, errors.get(), lost, violations.get(), kept };
    }
}
