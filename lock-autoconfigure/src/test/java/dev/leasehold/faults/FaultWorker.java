package dev.leasehold.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockLostEvent;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;

/**
 * One process of the fault suite (a child JVM): an application with only the Redis and Leasehold
 * auto-configurations, configured by command-line properties like a user's application. It takes one key
 * in a loop with {@link LockService}, and under it does a non-atomic read-modify-write of a counter on a
 * separate "resource" Redis, through the fencing check a user would write there ({@code fenced_read.lua},
 * {@code fenced_write.lua}). Each critical section ends with one record in the resource's list
 * {@value #SECTIONS}: {@code worker|token|callMicros|grantMicros|readMicros|endMicros|verdict|heldAfter|lostEvent}
 * (callMicros: when the worker asked for the lock; grantMicros: when it had it, which a pause may put long after
 * Redis granted it)
 * (verdict {@code A} accepted, {@code R} write refused, {@code r} read refused). It stops when the key
 * {@value #STOP} appears; while {@code holdoff:<id>} exists it takes no lock; while {@value #FREEZE} exists
 * a worker inside its section stays there.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class })
public class FaultWorker {

    static final String SECTIONS = "sections";

    static final String STOP = "stop";

    static final String FENCE = "fence";

    static final String COUNTER = "counter";

    /** The store's own record of each accepted write, made in the same step as the write (fenced_write.lua). */
    static final String WRITES = "writes";

    static final String INSIDE = "inside";

    static final String FREEZE = "freeze";

    /** Fencing tokens of the handles this process was told it lost (LockLostEvent). */
    private final Set<Long> lostTokens = ConcurrentHashMap.newKeySet();

    @EventListener
    void lockLost(LockLostEvent event) {
        lostTokens.add(event.getHandle().fencingToken());
        System.out.println("lock lost: token " + event.getHandle().fencingToken());
    }

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(FaultWorker.class)
            .web(WebApplicationType.NONE)
            .logStartupInfo(false)
            .run(args);
        Environment env = context.getEnvironment();
        String id = env.getRequiredProperty("fault.id");
        String key = env.getRequiredProperty("fault.key");
        Duration section = env.getProperty("fault.section", Duration.class, Duration.ofMillis(100));
        Duration think = env.getProperty("fault.think", Duration.class, Duration.ZERO);
        Duration wait = env.getProperty("fault.wait", Duration.class, Duration.ofSeconds(5));
        Duration runLimit = env.getProperty("fault.run-limit", Duration.class, Duration.ofMinutes(3));
        RedisClient resourceClient = RedisClient.create(RedisURI.create("127.0.0.1",
                env.getRequiredProperty("fault.resource-port", Integer.class)));
        int exit = 0;
        try (StatefulRedisConnection<String, String> connection = resourceClient.connect()) {
            connection.setTimeout(Duration.ofSeconds(5));
            Loop loop = new Loop(id, key, section, think, wait, context.getBean(LockService.class),
                    context.getBean(FaultWorker.class).lostTokens, connection.sync());
            System.out.println("worker " + id + " ready");
            loop.run(System.nanoTime() + runLimit.toNanos());
            System.out.println("worker " + id + " done: " + loop.summary());
        }
        catch (RuntimeException ex) {
            ex.printStackTrace(System.out);
            exit = 1;
        }
        finally {
            context.close();
            resourceClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        System.exit(exit);
    }

    private static final class Loop {

        private final String id;

        private final String key;

        private final Duration section;

        private final Duration think;

        private final Duration wait;

        private final LockService locks;

        private final Set<Long> lostTokens;

        private final RedisCommands<String, String> resource;

        private final String readScript = script("fenced_read.lua");

        private final String writeScript = script("fenced_write.lua");

        private int sections;

        private int notAcquired;

        private int errors;

        Loop(String id, String key, Duration section, Duration think, Duration wait, LockService locks,
                Set<Long> lostTokens, RedisCommands<String, String> resource) {
            this.id = id;
            this.key = key;
            this.section = section;
            this.think = think;
            this.wait = wait;
            this.locks = locks;
            this.lostTokens = lostTokens;
            this.resource = resource;
        }

        void run(long deadlineNanos) {
            while (System.nanoTime() < deadlineNanos && resource.exists(STOP) == 0) {
                if (resource.exists("holdoff:" + id) > 0) {
                    sleep(Duration.ofMillis(10));
                    continue;
                }
                Optional<LockHandle> handle;
                long callMicros = micros(Instant.now());
                try {
                    handle = locks.tryLock(key, wait, null);
                }
                catch (LockAcquisitionException ex) {
                    errors++;
                    System.out.println("not acquired: " + ex.getMessage());
                    continue;
                }
                if (handle.isEmpty()) {
                    notAcquired++;
                    continue;
                }
                try (LockHandle held = handle.get()) {
                    criticalSection(held, callMicros, micros(Instant.now()));
                }
                catch (RuntimeException ex) {
                    errors++;
                    System.out.println("section or release failed: " + ex);
                }
                if (!think.isZero()) {
                    sleep(Duration.ofMillis(ThreadLocalRandom.current().nextLong(think.toMillis() / 2, think.toMillis() + 1)));
                }
            }
        }

        private void criticalSection(LockHandle handle, long callMicros, long grantMicros) {
            long token = handle.fencingToken();
            List<Long> read = resource.eval(readScript, ScriptOutputType.MULTI, new String[] { FENCE, COUNTER, INSIDE },
                    Long.toString(token), id);
            long readMicros = read.get(2);
            if (read.get(0) != 1L) {
                record(handle, callMicros, grantMicros, readMicros, readMicros, "r");
                return;
            }
            long jitter = section.toMillis() / 4;
            sleep(Duration.ofMillis(section.toMillis() + ThreadLocalRandom.current().nextLong(-jitter, jitter + 1)));
            // the test can keep whoever is inside there (bounded), to line a fault up with an open section
            long frozenUntil = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (resource.exists(FREEZE) > 0 && System.nanoTime() < frozenUntil) {
                sleep(Duration.ofMillis(10));
            }
            List<Long> write = resource.eval(writeScript, ScriptOutputType.MULTI, new String[] { FENCE, COUNTER, INSIDE, WRITES },
                    Long.toString(token), Long.toString(read.get(1) + 1), id);
            record(handle, callMicros, grantMicros, readMicros, write.get(1), write.get(0) == 1L ? "A" : "R");
        }

        /** A refused section waits (bounded) until this process sees its lock as lost, as a user would check. */
        private void record(LockHandle handle, long callMicros, long grantMicros, long readMicros, long endMicros,
                String verdict) {
            if (!verdict.equals("A")) {
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while ((handle.isHeld() || !lostTokens.contains(handle.fencingToken())) && System.nanoTime() < deadline) {
                    sleep(Duration.ofMillis(10));
                }
            }
            sections++;
            resource.rpush(SECTIONS, String.join("|", id, Long.toString(handle.fencingToken()), Long.toString(callMicros),
                    Long.toString(grantMicros),
                    Long.toString(readMicros), Long.toString(endMicros), verdict, Boolean.toString(handle.isHeld()),
                    Boolean.toString(lostTokens.contains(handle.fencingToken()))));
        }

        String summary() {
            return sections + " sections, " + notAcquired + " waits ran out, " + errors + " errors";
        }
    }

    static long micros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }

    static String script(String name) {
        try (InputStream in = FaultWorker.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(Math.max(0, duration.toMillis()));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
