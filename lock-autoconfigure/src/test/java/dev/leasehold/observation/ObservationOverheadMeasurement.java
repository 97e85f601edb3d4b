package dev.leasehold.observation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.redis.LettuceLockServer;
import dev.leasehold.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What the observations cost (not in the normal build): process CPU time per lock and release, with and
 * without {@link LockObservations} (Micrometer's meter handler on a simple registry), alternating, medians of
 * 11 trials; {@code -Dleasehold.observation-overhead.handler=meters-without-ltt} or {@code none} for other handlers.
 * {@code ./mvnw -B -q -pl lock-autoconfigure -am test -Dtest=ObservationOverheadMeasurement
 * -Dsurefire.failIfNoSpecifiedTests=false -Dleasehold.observation-overhead=true}
 */
@EnabledIfSystemProperty(named = "leasehold.observation-overhead", matches = "true")
class ObservationOverheadMeasurement {

    private static final int TRIALS = 11;

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void measure() throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(redis.server().host(), redis.server().port()));
        factory.afterPropertiesSet();
        factory.start();
        LockEngineSettings settings = new LockEngineSettings("lock:", Duration.ofSeconds(30), Duration.ofSeconds(2),
                Duration.ofSeconds(2));
        ObservationRegistry registry = ObservationRegistry.create();
        String variant = System.getProperty("leasehold.observation-overhead.handler", "meters");
        switch (variant) {
            case "meters" -> registry.observationConfig()
                .observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
            case "meters-without-ltt" -> registry.observationConfig()
                .observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry(),
                        DefaultMeterObservationHandler.IgnoredMeters.LONG_TASK_TIMER));
            default -> registry.observationConfig().observationHandler(context -> true); // observations only
        }
        System.out.println("handler: " + variant);
        try (LettuceLockServer plainServer = new LettuceLockServer(factory, "lock:");
                LettuceLockServer observedServer = new LettuceLockServer(factory, "lock:");
                DefaultLockEngine plain = new DefaultLockEngine(plainServer, settings, new LockObserver() {
                });
                DefaultLockEngine observed = new DefaultLockEngine(observedServer, settings, new LockObservations(registry))) {
            run("warm-up", plain, observed, 1);
            run("measured", plain, observed, TRIALS);
        }
        finally {
            factory.destroy();
        }
    }

    private static void run(String phase, DefaultLockEngine plain, DefaultLockEngine observed, int trials) throws Exception {
        double[][] distinct = new double[2][trials];
        double[][] hot = new double[2][trials];
        for (int t = 0; t < trials; t++) {
            for (int which = 0; which < 2; which++) {
                DefaultLockEngine engine = which == 0 ? plain : observed;
                distinct[which][t] = distinctKeys(engine, 4000, phase + t + which);
                hot[which][t] = hotKey(engine, 4, 2500, phase + t + which);
            }
        }
        if (trials > 1) {
            System.out.printf("distinct keys, 1 thread: CPU per acquisition plain %.1f us, observed %.1f us, ratio %.2f%n",
                    median(distinct[0]), median(distinct[1]), median(distinct[1]) / median(distinct[0]));
            System.out.printf("one hot key, 4 threads: CPU per acquisition plain %.1f us, observed %.1f us, ratio %.2f%n",
                    median(hot[0]), median(hot[1]), median(hot[1]) / median(hot[0]));
        }
    }

    /** Process CPU time per acquisition in µs (less disturbed than wall time by other work on the machine). */
    private static double distinctKeys(DefaultLockEngine engine, int n, String run) {
        long started = cpuNanos();
        for (int i = 0; i < n; i++) {
            engine.tryLock("k:" + run + ":" + i, Duration.ZERO, null).orElseThrow().close();
        }
        return (cpuNanos() - started) / 1e3 / n;
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static double hotKey(DefaultLockEngine engine, int threads, int perThread, String run) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<Void>> work = new ArrayList<>();
            long started = cpuNanos();
            for (int t = 0; t < threads; t++) {
                work.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < perThread; i++) {
                        try (LockHandle handle = engine.lock("hot:" + run, Duration.ofSeconds(30))) {
                            // nothing: the cost of the lock itself
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(work.toArray(CompletableFuture[]::new)).join();
            return (cpuNanos() - started) / 1e3 / (threads * perThread);
        }
        finally {
            pool.shutdownNow();
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
