package dev.leasehold.faults;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

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
 * One JVM of the soak: {@code soak.threads} threads lock random keys of {@code soak.keys} and do a fenced
 * read-modify-write of that key's counter on the resource Redis ({@code soak_enter.lua}, {@code soak_exit.lua}).
 * The test steers it through the resource key {@code phase}: {@code idle-before} / {@code idle-after} (no
 * locking; once idle it writes {@code metrics:<id>:<phase>} = {@code threads|heapAfterGcBytes}), {@code load},
 * {@code stop}. At the end it writes {@code result:<id>} = {@code acquired|notAcquired|errors|refused|lost}.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class })
public class SoakWorker {

    static final AtomicLong lost = new AtomicLong();

    @EventListener
    void lockLost(LockLostEvent event) {
        lost.incrementAndGet();
        System.out.println("lock lost: " + event.getHandle().key());
    }

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(SoakWorker.class)
            .web(WebApplicationType.NONE)
            .logStartupInfo(false)
            .run(args);
        Environment env = context.getEnvironment();
        String id = env.getRequiredProperty("soak.id");
        int threads = env.getProperty("soak.threads", Integer.class, 16);
        int keys = env.getProperty("soak.keys", Integer.class, 100);
        LockService locks = context.getBean(LockService.class);
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", env.getRequiredProperty("soak.resource-port", Integer.class)));
        AtomicLong acquired = new AtomicLong();
        AtomicLong notAcquired = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong busy = new AtomicLong();
        String enter = FaultWorker.script("soak_enter.lua");
        String exit = FaultWorker.script("soak_exit.lua");
        List<Thread> workers = new ArrayList<>();
        List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
        StatefulRedisConnection<String, String> control = client.connect();
        for (int t = 0; t < threads; t++) {
            StatefulRedisConnection<String, String> connection = client.connect();
            connections.add(connection);
            RedisCommands<String, String> resource = connection.sync();
            Thread thread = new Thread(() -> {
                while (true) {
                    String phase = resource.get("phase");
                    if ("stop".equals(phase)) {
                        return;
                    }
                    if (!"load".equals(phase)) {
                        sleep(20);
                        continue;
                    }
                    busy.incrementAndGet();
                    try {
                        String key = "soak-" + ThreadLocalRandom.current().nextInt(keys);
                        Optional<LockHandle> handle = locks.tryLock(key, Duration.ofSeconds(5), null);
                        if (handle.isEmpty()) {
                            notAcquired.incrementAndGet();
                            continue;
                        }
                        try (LockHandle held = handle.get()) {
                            acquired.incrementAndGet();
                            String token = Long.toString(held.fencingToken());
                            String[] names = { "fence:" + key, "counter:" + key, "inside:" + key, "doubles" };
                            List<Long> read = resource.eval(enter, ScriptOutputType.MULTI, names, token);
                            if (read.get(0) != 1L) {
                                refused.incrementAndGet();
                                continue;
                            }
                            sleep(ThreadLocalRandom.current().nextInt(3));
                            names[3] = "accepted";
                            Long written = resource.eval(exit, ScriptOutputType.INTEGER, names, token,
                                    Long.toString(read.get(1) + 1));
                            if (written != 1L) {
                                refused.incrementAndGet();
                            }
                        }
                    }
                    catch (LockAcquisitionException ex) {
                        errors.incrementAndGet();
                    }
                    catch (RuntimeException ex) {
                        errors.incrementAndGet();
                        System.out.println("unexpected: " + ex);
                    }
                    finally {
                        busy.decrementAndGet();
                    }
                }
            }, "soak-" + t);
            workers.add(thread);
            thread.start();
        }
        RedisCommands<String, String> resource = control.sync();
        System.out.println("soak worker " + id + " ready");
        String measured = "";
        while (true) {
            String phase = resource.get("phase");
            if ("stop".equals(phase)) {
                break;
            }
            if (phase != null && phase.startsWith("idle") && !phase.equals(measured) && busy.get() == 0) {
                resource.set("metrics:" + id + ":" + phase, Thread.activeCount() + "|" + heapAfterGc());
                measured = phase;
            }
            sleep(50);
        }
        for (Thread thread : workers) {
            thread.join(30_000);
        }
        resource.set("result:" + id, acquired + "|" + notAcquired + "|" + errors + "|" + refused + "|" + lost);
        System.out.println("soak worker " + id + " done: acquired " + acquired + ", not acquired " + notAcquired
                + ", errors " + errors + ", refused " + refused + ", lost " + lost);
        connections.forEach(StatefulRedisConnection::close);
        control.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        context.close();
        System.exit(0);
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
