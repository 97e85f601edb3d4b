package dev.leasehold.faults;

import java.time.Duration;
import java.util.List;

import dev.leasehold.test.fault.FaultProxy;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak ({@code ./mvnw -B verify -Psoak -pl lock-autoconfigure -am}): 2 JVMs x 16 threads on 100 keys
 * for {@code leasehold.soak.seconds} (default 60), with a 2 s black hole between one JVM and Redis in the
 * middle. No double grant and no lost update; and between an idle moment before and one after the load,
 * no growth in threads, heap after GC, Redis connections, subscribed channels or keys without a TTL.
 */
@EnabledIfSystemProperty(named = "leasehold.soak", matches = "true")
@Timeout(900)
class SoakTest {

    record RedisFigures(int connections, int channels, int keysWithoutTtl) {
    }

    @Test
    void soak() {
        Duration duration = Duration.ofSeconds(Long.getLong("leasehold.soak.seconds", 60));
        try (TestRedisServer redis = TestRedisServers.start();
                TestRedisServer resource = TestRedisServers.start();
                FaultProxy first = FaultProxy.start(redis.host(), redis.port());
                FaultProxy second = FaultProxy.start(redis.host(), redis.port());
                WorkerProcesses workers = new WorkerProcesses("soak")) {
            resource.command("SET", "phase", "load");
            int index = 0;
            for (FaultProxy proxy : List.of(first, second)) {
                String id = "jvm" + (++index);
                workers.start(id, SoakWorker.class, List.of("--soak.id=" + id, "--soak.threads=16", "--soak.keys=100",
                        "--soak.resource-port=" + resource.port(), "--spring.data.redis.host=127.0.0.1",
                        "--spring.data.redis.port=" + proxy.port(), "--leasehold.lease-time=5s",
                        "--leasehold.redis-timeout=500ms", "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
            }
            // warm up: every key used, every connection and channel made once
            await(Duration.ofSeconds(60), "warm-up", () -> Long.parseLong(orZero(resource.command("GET", "accepted"))) > 3_000,
                    workers);
            RedisFigures before = idle(resource, redis, "idle-before", workers);
            List<String> jvmBefore = List.of(resource.command("GET", "metrics:jvm1:idle-before"),
                    resource.command("GET", "metrics:jvm2:idle-before"));

            resource.command("SET", "phase", "load");
            long started = System.nanoTime();
            pause(duration.toMillis() / 2);
            first.blackhole();
            pause(2_000);
            first.heal();
            pause(Math.max(0, duration.toMillis() - (System.nanoTime() - started) / 1_000_000));

            RedisFigures after = idle(resource, redis, "idle-after", workers);
            List<String> jvmAfter = List.of(resource.command("GET", "metrics:jvm1:idle-after"),
                    resource.command("GET", "metrics:jvm2:idle-after"));
            resource.command("SET", "phase", "stop");
            workers.awaitExit(Duration.ofSeconds(60));

            long accepted = Long.parseLong(orZero(resource.command("GET", "accepted")));
            long counterSum = 0;
            for (int key = 0; key < 100; key++) {
                counterSum += Long.parseLong(orZero(resource.command("GET", "counter:soak-" + key)));
            }
            long doubles = Long.parseLong(orZero(resource.command("GET", "doubles")));
            List<String> results = List.of(resource.command("GET", "result:jvm1"), resource.command("GET", "result:jvm2"));
            System.out.println("SOAK " + duration.toSeconds() + " s, 2 JVMs x 16 threads, 100 keys, 2 s black hole on jvm1");
            System.out.println("SOAK results (acquired|notAcquired|errors|refused|lost) " + results);
            System.out.println("SOAK accepted sections " + accepted + ", sum of counters " + counterSum
                    + ", double grants " + doubles);
            System.out.println("SOAK before: redis " + before + ", jvm (threads|heapAfterGc) " + jvmBefore);
            System.out.println("SOAK after:  redis " + after + ", jvm (threads|heapAfterGc) " + jvmAfter);

            assertThat(doubles).as("double grants").isZero();
            assertThat(counterSum).as("lost updates: counters vs accepted sections").isEqualTo(accepted);
            for (String result : results) {
                assertThat(Long.parseLong(result.split("\\|")[4])).as("locks lost while held").isZero();
            }
            assertThat(after.connections()).as("Redis connections").isLessThanOrEqualTo(before.connections());
            assertThat(after.channels()).as("subscribed channels").isLessThanOrEqualTo(before.channels());
            assertThat(after.keysWithoutTtl()).as("lock keys without a TTL").isZero();
            for (int i = 0; i < 2; i++) {
                String[] b = jvmBefore.get(i).split("\\|");
                String[] a = jvmAfter.get(i).split("\\|");
                assertThat(Integer.parseInt(a[0])).as("threads of jvm" + (i + 1)).isLessThanOrEqualTo(Integer.parseInt(b[0]));
                // heap after GC: allow noise (a few MB), not growth with the number of locks taken
                assertThat(Long.parseLong(a[1])).as("heap after GC of jvm" + (i + 1))
                    .isLessThanOrEqualTo(Long.parseLong(b[1]) + Math.max(8L << 20, Long.parseLong(b[1]) / 4));
            }
        }
    }

    /** Stops the load, waits until both JVMs measured themselves and the channels' linger ran out; Redis figures. */
    private RedisFigures idle(TestRedisServer resource, TestRedisServer redis, String phase, WorkerProcesses workers) {
        resource.command("SET", "phase", phase);
        await(Duration.ofSeconds(60), phase + " measured by both JVMs",
                () -> !resource.command("GET", "metrics:jvm1:" + phase).equals("null")
                        && !resource.command("GET", "metrics:jvm2:" + phase).equals("null"), workers);
        pause(3_000); // leasehold.subscription-linger (2 s): channels of the last waits are given up
        int connections = (int) redis.command("CLIENT", "LIST").lines().filter(line -> line.contains("id=")).count() - 1;
        String channels = redis.command("PUBSUB", "CHANNELS");
        int channelCount = channels.equals("[]") ? 0 : channels.split(",").length;
        int withoutTtl = 0;
        String keys = redis.command("KEYS", "*");
        if (!keys.equals("[]")) {
            for (String key : keys.replaceAll("^\\[|\\]$", "").split(",\\s*")) {
                if (redis.command("PTTL", key).equals("-1")) {
                    withoutTtl++;
                }
            }
        }
        return new RedisFigures(connections, channelCount, withoutTtl);
    }

    private static String orZero(String value) {
        return value == null || value.equals("null") ? "0" : value;
    }

    private static void await(Duration timeout, String what, java.util.function.BooleanSupplier condition,
            WorkerProcesses workers) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("timed out waiting for " + what + "\n" + workers.tails()).isLessThan(deadline);
            pause(20);
        }
    }

    private static void pause(long millis) {
        FaultScenario.sleep(millis);
    }
}
