package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances that serve equal shares of the requests for one key must also wait alike: the turns
 * between them must be fair in time, not only in count. This is the demo's load (32 clients behind a
 * round-robin load balancer in front of two instances, each request a short section under one lock, then
 * the answer's way back to the client), reduced to two engines.
 * <p>
 * Turns that serve a fixed number of local waiters (a block of hand-offs), later arrivals included, keep
 * whatever split of the waiting clients the first moments made: the instance with the short queue serves
 * its newcomers at once, the other keeps its long queue, and both serve as many per turn, so nothing
 * evens it out (seen: 5 against 25 clients waiting, 15 against 75 ms median wait). Gated turns (only the
 * waiters that came by shortly after the grant, once the other instance queues) give the longer queue the
 * longer turn, which evens the queues out.
 */
class TurnsInTimeTest extends RealRedisEngineTest {

    @Test
    void twoInstancesWithEqualSharesWaitAlikeAfterABurstReachedOneFirst() throws Exception {
        DefaultLockEngine[] instances = { fixture.engine(), fixture.engine() };
        for (DefaultLockEngine instance : instances) {
            instance.lock("warm-up", Duration.ofSeconds(10)).close(); // connected, scripts loaded
        }
        int clients = 32;
        AtomicInteger attempts = new AtomicInteger();
        List<List<Long>> waits = List.of(Collections.synchronizedList(new ArrayList<>()),
                Collections.synchronizedList(new ArrayList<>()));
        long started = System.nanoTime();
        long measuredFrom = started + Duration.ofSeconds(1).toNanos();
        long end = started + Duration.ofSeconds(4).toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<?>> workers = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            workers.add(pool.submit(() -> {
                while (System.nanoTime() < end) {
                    int attempt = attempts.getAndIncrement();
                    // every client's first request reaches the second instance (it came up first, say), then round robin
                    int instance = attempt < clients ? 1 : attempt % 2;
                    long asked = System.nanoTime();
                    try (LockHandle handle = instances[instance].lock("show", Duration.ofSeconds(20))) {
                        if (asked > measuredFrom) {
                            waits.get(instance).add(System.nanoTime() - asked);
                        }
                        Thread.sleep(1); // the section: a short transaction
                    }
                    Thread.sleep(1); // the answer's way to the client and its next request's way back
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        double[] p50 = { percentile(waits.get(0), 0.5), percentile(waits.get(1), 0.5) };
        double[] mean = { mean(waits.get(0)), mean(waits.get(1)) };
        String figures = String.format(Locale.ROOT, "waits (ms): first p50 %.1f mean %.1f (%d), second p50 %.1f mean %.1f (%d)",
                p50[0], mean[0], waits.get(0).size(), p50[1], mean[1], waits.get(1).size());
        System.out.println(figures);
        // the mean wait is the number of clients waiting at the instance over its rate (Little's law), and the
        // rates are equal: equal means, equal queues. (Its tail is a few requests, which one stall of a busy
        // machine decides: not asserted here; the demo's three runs show p99.)
        assertThat(Math.max(p50[0], p50[1]) / Math.min(p50[0], p50[1])).as("p50 ratio; " + figures).isLessThanOrEqualTo(1.5);
        assertThat(Math.max(mean[0], mean[1]) / Math.min(mean[0], mean[1])).as("mean ratio; " + figures).isLessThanOrEqualTo(1.5);
    }

    /**
     * Another instance waits about one turn check per turn ahead of it, not a long turn: with four instances of
     * two threads and 1 ms sections, 50 ms turns gave a p99 wait of 160 ms (three turns ahead), above Redisson's.
     * Here one instance keeps the key busy with two threads while the other's one thread comes back every few ms.
     */
    @Test
    void anotherInstanceWaitsAboutOneTurnCheckWhileThisOneKeepsTheKeyBusy() throws Exception {
        // a 10 ms turn check, so that a turn of the default (25 ms) or of the old 50 ms fails the bound below
        LockEngineSettings tenMillisecondTurns = EngineFixture.fastSettings()
            .withHandOff(new LockEngineSettings.HandOff(64, Duration.ofMillis(10)));
        DefaultLockEngine busy = fixture.engine(tenMillisecondTurns);
        DefaultLockEngine other = fixture.engine(tenMillisecondTurns);
        busy.lock("warm-up", Duration.ofSeconds(10)).close();
        other.lock("warm-up", Duration.ofSeconds(10)).close();
        long started = System.nanoTime();
        long measuredFrom = started + Duration.ofMillis(500).toNanos();
        long end = started + Duration.ofMillis(3500).toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            workers.add(pool.submit(() -> {
                while (System.nanoTime() < end) {
                    try (LockHandle handle = busy.lock("busy", Duration.ofSeconds(20))) {
                        Thread.sleep(1);
                    }
                }
                return null;
            }));
        }
        List<Long> waits = Collections.synchronizedList(new ArrayList<>());
        workers.add(pool.submit(() -> {
            while (System.nanoTime() < end) {
                long asked = System.nanoTime();
                try (LockHandle handle = other.lock("busy", Duration.ofSeconds(20))) {
                    if (asked > measuredFrom) {
                        waits.add(System.nanoTime() - asked);
                    }
                    Thread.sleep(1);
                }
                Thread.sleep(2);
            }
            return null;
        }));
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        long turnCheckMs = tenMillisecondTurns.handOff().turnCheck().toMillis();
        String figures = String.format(Locale.ROOT, "other instance's waits (ms): p50 %.1f p90 %.1f max %.1f (%d); turn check %d ms",
                percentile(waits, 0.5), percentile(waits, 0.9), percentile(waits, 1.0), waits.size(), turnCheckMs);
        System.out.println(figures);
        assertThat(waits).as(figures).hasSizeGreaterThan(20);
        // a turn ends at most a turn check after the busy instance learns the other queued (its next token
        // reservation, itself at most a turn check away), plus a section and Redis's hand-over
        assertThat(percentile(waits, 0.5)).as(figures).isLessThan(25.0); // 53 ms with 50 ms turns
    }

    private static double mean(List<Long> nanos) {
        synchronized (nanos) {
            return nanos.stream().mapToLong(Long::longValue).average().orElseThrow() / 1e6;
        }
    }

    private static double percentile(List<Long> nanos, double phi) {
        List<Long> sorted;
        synchronized (nanos) {
            sorted = new ArrayList<>(nanos);
        }
        Collections.sort(sorted);
        return sorted.get(Math.min(sorted.size() - 1, (int) (phi * sorted.size()))) / 1e6;
    }
}
