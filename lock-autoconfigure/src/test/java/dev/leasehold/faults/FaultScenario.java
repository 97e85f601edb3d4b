package dev.leasehold.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import dev.leasehold.test.fault.FaultProxy;
import dev.leasehold.test.redis.TestRedisServer;

import static org.assertj.core.api.Assertions.fail;

/**
 * One row of the fault suite: three {@link FaultWorker} processes on one key, each reaching the lock Redis
 * through its own {@link FaultProxy} (or directly, for Sentinel), all writing through the fencing check
 * on the resource Redis. The test injects its fault in between {@link #start} and {@link #stop}.
 */
final class FaultScenario implements AutoCloseable {

    static final String KEY = "fault-key";

    final String name;

    final TestRedisServer resource;

    final WorkerProcesses workers;

    final Map<String, FaultProxy> proxies = new LinkedHashMap<>();

    private final List<String> ids = new ArrayList<>();

    /** Each worker's arguments, to start it again after a kill. */
    private final Map<String, List<String>> argsOf = new LinkedHashMap<>();

    FaultScenario(String name, TestRedisServer resource) {
        this.name = name;
        this.resource = resource;
        this.workers = new WorkerProcesses(name);
        resource.command("FLUSHALL");
    }

    /**
     * Starts one worker per entry of {@code perWorker}: the common properties, plus that worker's own
     * (for example its Redis address or user).
     */
    FaultScenario start(List<String> common, Map<String, List<String>> perWorker) {
        perWorker.forEach((id, own) -> {
            List<String> args = new ArrayList<>(List.of("--fault.id=" + id, "--fault.key=" + KEY,
                    "--fault.resource-port=" + resource.port(), "--spring.main.banner-mode=off",
                    "--logging.level.root=WARN", "--logging.level.dev.leasehold=INFO"));
            args.addAll(common);
            args.addAll(own);
            workers.start(id, FaultWorker.class, args);
            ids.add(id);
            argsOf.put(id, args);
        });
        return this;
    }

    /** Workers that reach {@code redis} through a proxy each. */
    FaultScenario startBehindProxies(TestRedisServer redis, int count, List<String> common) {
        Map<String, List<String>> perWorker = new LinkedHashMap<>();
        for (int i = 1; i <= count; i++) {
            FaultProxy proxy = FaultProxy.start(redis.host(), redis.port());
            proxies.put("w" + i, proxy);
            perWorker.put("w" + i, List.of("--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + proxy.port()));
        }
        return start(common, perWorker);
    }

    /** Starts a killed worker again, as its orchestrator would (a new JVM with the same settings). */
    void restart(String id) {
        workers.start(id, FaultWorker.class, argsOf.get(id));
    }

    List<String> ids() {
        return ids;
    }

    /** The resource Redis clock, in microseconds: the clock the sections are recorded in. */
    long now() {
        String reply = resource.command("TIME");
        String[] parts = reply.replaceAll("[\\[\\]\\s]", "").split(",");
        return Long.parseLong(parts[0]) * 1_000_000L + Long.parseLong(parts[1]);
    }

    int sectionCount() {
        return Integer.parseInt(resource.command("LLEN", FaultWorker.SECTIONS));
    }

    void awaitSections(int atLeast, Duration timeout) {
        await(timeout, atLeast + " critical sections", () -> sectionCount() >= atLeast);
    }

    /** Waits until some worker is inside a critical section that began after {@code afterMicros}; its id. */
    Inside awaitInside(long afterMicros, Duration timeout) {
        Inside[] found = new Inside[1];
        await(timeout, "a worker inside a critical section", () -> {
            String inside = resource.command("GET", FaultWorker.INSIDE);
            if (inside == null || inside.equals("null")) {
                return false;
            }
            String[] parts = inside.split(":");
            Inside candidate = new Inside(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]));
            if (candidate.readMicros() <= afterMicros) {
                return false;
            }
            found[0] = candidate;
            return true;
        });
        return found[0];
    }

    /** Like {@link #awaitInside} but gives up quietly. */
    Optional<Inside> insideWithin(long afterMicros, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String inside = resource.command("GET", FaultWorker.INSIDE);
            if (inside != null && !inside.equals("null")) {
                String[] parts = inside.split(":");
                Inside candidate = new Inside(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]));
                if (candidate.readMicros() > afterMicros) {
                    return Optional.of(candidate);
                }
            }
            sleep(5);
        }
        return Optional.empty();
    }

    record Inside(String worker, long token, long readMicros) {
    }

    void holdOff(String worker, boolean on) {
        if (on) {
            resource.command("SET", "holdoff:" + worker, "1");
        }
        else {
            resource.command("DEL", "holdoff:" + worker);
        }
    }

    /** The sections recorded so far. */
    List<SectionLog.Section> sectionsSoFar() {
        List<SectionLog.Section> sections = new ArrayList<>();
        String list = resource.command("LRANGE", FaultWorker.SECTIONS, "0", "-1");
        for (String line : list.replaceAll("^\\[|\\]$", "").split(",\\s*")) {
            if (!line.isBlank()) {
                sections.add(SectionLog.Section.parse(line.trim()));
            }
        }
        return sections;
    }

    /** Waits until {@code count} sections began after {@code micros}. */
    void awaitSectionsAfter(long micros, int count, Duration timeout) {
        await(timeout, count + " critical sections after the fault",
                () -> sectionsSoFar().stream().filter(section -> section.readMicros() > micros).count() >= count);
    }

    /** Whether the worker recorded the section of that token. */
    boolean recorded(String worker, long token) {
        return sectionsSoFar().stream().anyMatch(section -> section.worker().equals(worker) && section.token() == token);
    }

    /** Whether one of the workers began a section after {@code micros}. */
    boolean takenBy(List<String> workers, long micros) {
        return sectionsSoFar().stream().anyMatch(section -> workers.contains(section.worker()) && section.readMicros() > micros);
    }

    /** Tells every worker to stop, waits for them, and returns what they recorded. */
    SectionLog stop() {
        resource.command("SET", FaultWorker.STOP, "1");
        workers.awaitExit(Duration.ofSeconds(20));
        List<SectionLog.Section> sections = sectionsSoFar();
        String counter = resource.command("GET", FaultWorker.COUNTER);
        long writes = Long.parseLong(resource.command("LLEN", FaultWorker.WRITES).trim());
        return new SectionLog(sections, counter == null || counter.equals("null") ? 0 : Long.parseLong(counter), writes);
    }

    void await(Duration timeout, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("Timed out after " + timeout + " waiting for " + what + "\n" + workers.tails());
            }
            sleep(5);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        workers.close();
        proxies.values().forEach(FaultProxy::close);
    }
}
