package dev.leasehold.faults;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.LockHandle;
import dev.leasehold.LockLostEvent;
import dev.leasehold.LockService;
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration;
import dev.leasehold.engine.LockObserver;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;

/**
 * The child JVM of {@link PausedHandOffTest}: {@code handoff.threads} threads take one key in a loop with a
 * watchdog lease, so a releasing thread hands the lock to the next one queued in this JVM (local hand-off).
 * Each critical section is a fenced read-modify-write of a counter on the resource Redis, recorded in the
 * list {@value FaultWorker#SECTIONS} in {@link SectionLog}'s format (worker = thread name).
 * <p>
 * The test makes one holder stop at a chosen point of its section, so it can pause the JVM there: when
 * the key {@code park:<point>} exists (point {@value #BEFORE_WRITE} or {@value #AFTER_WRITE}), the first
 * thread to reach that point takes it away, waits until the other threads queue for the key, writes
 * {@value #PARKED} = {@code point|thread|token|queued|parkEndMicros} and stays there for
 * {@code handoff.park} (local time only: once the JVM resumes after a longer pause, it goes on at once).
 * After its close it writes {@code park-result:<point>} = {@code token|isHeldOnResume|lostEvent|reason} (the
 * reason the engine gave its observers for the loss).
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LeaseholdAutoConfiguration.class })
public class HandOffWorker {

    static final String BEFORE_WRITE = "before-write";

    static final String AFTER_WRITE = "after-write";

    static final String PARKED = "parked";

    /** Fencing tokens of the handles this JVM was told it lost (LockLostEvent). */
    private final Set<Long> lostTokens = ConcurrentHashMap.newKeySet();

    /** Why each lost lock was lost, by fencing token (the engine's observer is told the reason). */
    private final Map<Long, String> lostReasons = new ConcurrentHashMap<>();

    @EventListener
    void lockLost(LockLostEvent event) {
        lostTokens.add(event.getHandle().fencingToken());
        System.out.println("lock lost: token " + event.getHandle().fencingToken());
    }

    @Bean
    LockObserver lossReasons() {
        return new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                lostReasons.put(handle.fencingToken(), reason);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(HandOffWorker.class)
            .web(WebApplicationType.NONE)
            .logStartupInfo(false)
            .run(args);
        Environment env = context.getEnvironment();
        int threads = env.getProperty("handoff.threads", Integer.class, 4);
        Duration runLimit = env.getProperty("handoff.run-limit", Duration.class, Duration.ofSeconds(90));
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1",
                env.getRequiredProperty("handoff.resource-port", Integer.class)));
        int exit = 0;
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.setTimeout(Duration.ofSeconds(5));
            HandOffWorker worker = context.getBean(HandOffWorker.class);
            Loops loops = new Loops(env, threads, context.getBean(LockService.class), worker.lostTokens,
                    worker.lostReasons, connection.sync());
            List<Thread> running = new ArrayList<>();
            long deadline = System.nanoTime() + runLimit.toNanos();
            for (int t = 1; t <= threads; t++) {
                Thread thread = new Thread(() -> loops.run(deadline), "t" + t);
                running.add(thread);
                thread.start();
            }
            System.out.println("hand-off worker ready, " + threads + " threads");
            for (Thread thread : running) {
                thread.join(runLimit.toMillis() + 30_000);
            }
            System.out.println("hand-off worker done: " + loops.sections + " sections, " + loops.errors + " errors");
            exit = loops.errors.get() == 0 ? 0 : 1;
        }
        finally {
            context.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        System.exit(exit);
    }

    private static final class Loops {

        private final String key;

        private final Duration section;

        private final Duration park;

        private final int threads;

        private final LockService locks;

        private final Set<Long> lostTokens;

        private final Map<Long, String> lostReasons;

        private final RedisCommands<String, String> resource;

        private final String readScript = FaultWorker.script("fenced_read.lua");

        private final String writeScript = FaultWorker.script("fenced_write.lua");

        /** Threads inside tryLock now: queued at the key's local gate while another thread holds it. */
        private final AtomicInteger queued = new AtomicInteger();

        private final AtomicInteger sections = new AtomicInteger();

        private final AtomicInteger errors = new AtomicInteger();

        Loops(Environment env, int threads, LockService locks, Set<Long> lostTokens, Map<Long, String> lostReasons,
                RedisCommands<String, String> resource) {
            this.key = env.getRequiredProperty("handoff.key");
            this.section = env.getProperty("handoff.section", Duration.class, Duration.ofMillis(20));
            this.park = env.getProperty("handoff.park", Duration.class, Duration.ofSeconds(2));
            this.threads = threads;
            this.locks = locks;
            this.lostTokens = lostTokens;
            this.lostReasons = lostReasons;
            this.resource = resource;
        }

        void run(long deadlineNanos) {
            String id = Thread.currentThread().getName();
            while (System.nanoTime() < deadlineNanos && resource.exists(FaultWorker.STOP) == 0) {
                try {
                    oneSection(id);
                }
                catch (RuntimeException ex) {
                    errors.incrementAndGet();
                    ex.printStackTrace(System.out);
                }
            }
        }

        private void oneSection(String id) {
            queued.incrementAndGet();
            Optional<LockHandle> taken;
            long callMicros = FaultWorker.micros(Instant.now());
            try {
                taken = locks.tryLock(key, Duration.ofSeconds(30), null);
            }
            finally {
                queued.decrementAndGet();
            }
            if (taken.isEmpty()) {
                errors.incrementAndGet();
                System.out.println(id + ": not acquired within 30 s");
                return;
            }
            String verdict;
            long grantMicros = FaultWorker.micros(Instant.now());
            long readMicros;
            long endMicros;
            boolean heldAfter = true;
            String parkedAt = null;
            boolean heldOnResume = true;
            long token;
            try (LockHandle handle = taken.get()) {
                token = handle.fencingToken();
                String[] names = { FaultWorker.FENCE, FaultWorker.COUNTER, FaultWorker.INSIDE };
                List<Long> read = resource.eval(readScript, ScriptOutputType.MULTI, names, Long.toString(token), id);
                readMicros = read.get(2);
                if (read.get(0) != 1L) {
                    verdict = "r";
                    endMicros = readMicros;
                    heldAfter = handle.isHeld();
                }
                else {
                    sleep(section.toMillis());
                    if (parkHere(BEFORE_WRITE, id, token)) {
                        parkedAt = BEFORE_WRITE;
                        heldOnResume = handle.isHeld();
                    }
                    List<Long> write = resource.eval(writeScript, ScriptOutputType.MULTI,
                            new String[] { FaultWorker.FENCE, FaultWorker.COUNTER, FaultWorker.INSIDE, FaultWorker.WRITES },
                            Long.toString(token),
                            Long.toString(read.get(1) + 1), id);
                    endMicros = write.get(1);
                    verdict = write.get(0) == 1L ? "A" : "R";
                    heldAfter = handle.isHeld();
                    if (parkHere(AFTER_WRITE, id, token)) {
                        parkedAt = AFTER_WRITE;
                        heldOnResume = handle.isHeld();
                    }
                }
                if (parkedAt != null) {
                    System.out.println(id + " resumed " + parkedAt + ": token " + token + ", isHeld() " + heldOnResume);
                }
            }
            // a holder refused by fencing (or paused past its lease) must be told it lost the lock: wait for that
            boolean lost = lostTokens.contains(token);
            if (!verdict.equals("A") || parkedAt != null) {
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (!(lost = lostTokens.contains(token)) && System.nanoTime() < deadline) {
                    sleep(5);
                }
            }
            sections.incrementAndGet();
            resource.rpush(FaultWorker.SECTIONS, String.join("|", id, Long.toString(token), Long.toString(callMicros),
                    Long.toString(grantMicros),
                    Long.toString(readMicros), Long.toString(endMicros), verdict, Boolean.toString(heldAfter),
                    Boolean.toString(lost)));
            if (parkedAt != null) {
                resource.set("park-result:" + parkedAt, String.join("|", Long.toString(token),
                        Boolean.toString(heldOnResume), Boolean.toString(lost), lostReasons.getOrDefault(token, "")));
            }
        }

        /** True when this thread stopped here for the test (see the class comment), and is now going on. */
        private boolean parkHere(String point, String id, long token) {
            if (resource.del("park:" + point) == 0) {
                return false;
            }
            long queuedBy = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (queued.get() < threads - 1 && System.nanoTime() < queuedBy) {
                sleep(1);
            }
            long parkEndMicros = FaultWorker.micros(Instant.now()) + park.toNanos() / 1000;
            long parkEnd = System.nanoTime() + park.toNanos();
            resource.set(PARKED, String.join("|", point, id, Long.toString(token), Integer.toString(queued.get()),
                    Long.toString(parkEndMicros)));
            // local waiting only: after a pause longer than the park, the thread goes on without a round trip
            for (long left = parkEnd - System.nanoTime(); left > 0; left = parkEnd - System.nanoTime()) {
                sleep(Math.max(1, left / 1_000_000));
            }
            return true;
        }
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
