package dev.leasehold.faults;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.faults.FaultScenario.Inside;
import dev.leasehold.faults.SectionLog.Section;
import dev.leasehold.faults.SectionLog.Verdict;
import dev.leasehold.test.fault.FaultProxy;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults injected while three processes take one key in a loop (see {@link FaultWorker}); each test is one
 * row of the "Failure modes" table (docs/failure-modes.md). Every row checks the invariants over what the processes did
 * (counter = accepted sections, no two accepted sections overlap, tokens grow in grant order, a holder
 * refused by fencing was told its lock was lost) and how long locking took to recover.
 * <p>
 * The workers are configured as a user would: {@code leasehold.redis-timeout=500ms} and a shorter driver
 * timeout, {@code spring.data.redis.timeout=300ms}.
 */
@Timeout(120)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultSuiteTest {

    /** Scheduling slack on a loaded 2-core machine, on top of a bound the engine promises. */
    private static final long SLACK_MILLIS = 1_200;

    private static TestRedisServer redis;

    private static TestRedisServer resource;

    private FaultScenario scenario;

    @BeforeAll
    static void startServers() {
        redis = TestRedisServers.start(List.of("--enable-debug-command", "yes"));
        Assumptions.assumeTrue(redis.controllable(), "the fault suite needs Redis servers it may kill and pause");
        resource = TestRedisServers.start();
    }

    @AfterAll
    static void stopServers() {
        System.out.println("Failure modes measured:\n" + FaultTable.markdown());
        if (resource != null) {
            resource.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeScenario() {
        if (scenario != null) {
            scenario.close();
        }
        redis.start(); // in case a test stopped it
        redis.command("FLUSHALL");
    }

    static List<String> settings(Duration lease, Duration section, Duration think) {
        return List.of("--leasehold.lease-time=" + lease.toMillis() + "ms", "--leasehold.redis-timeout=500ms",
                "--spring.data.redis.timeout=" + System.getProperty("faults.driver-timeout", "300ms"),
                "--fault.section=" + section.toMillis() + "ms", "--fault.think=" + think.toMillis() + "ms",
                "--fault.wait=30s");
    }

    private FaultScenario scenario(String name, Duration lease) {
        scenario = new FaultScenario(name, resource);
        scenario.startBehindProxies(redis, 3, settings(lease, Duration.ofMillis(150), Duration.ofMillis(60)));
        scenario.awaitSections(6, Duration.ofSeconds(60));
        return scenario;
    }

    private static long millis(long micros) {
        return Math.round(micros / 1000.0);
    }

    private void assertNoViolations(Verdict verdict) {
        assertThat(verdict.violations()).as("invariant violations\n" + scenario.workers.tails()).isEmpty();
        // 137: killed by the test
        assertThat(scenario.workers.exitCodes().values()).as("worker exit codes\n" + scenario.workers.tails())
            .allMatch(code -> code == null || code == 0 || code == 137);
    }

    @Test
    @Order(1)
    void holderKilled() {
        Duration lease = Duration.ofSeconds(2);
        scenario("holder-sigkill", lease);
        Inside holder = scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        long killedAt = scenario.now();
        scenario.workers.kill(holder.worker());
        scenario.awaitSectionsAfter(killedAt, 4, Duration.ofSeconds(20));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(killedAt, section -> true).orElseThrow().readMicros() - killedAt);
        FaultTable.add(new FaultTable.Row("holder SIGKILL (lease " + lease.toSeconds() + " s)", verdict, recovery,
                "after the kill", "others wait for the rest of the dead holder's lease, then go on"));
        assertNoViolations(verdict);
        assertThat(verdict.overlaps()).isZero();
        // a waiter is woken when the dead holder's lease ends, not a lease later
        assertThat(recovery).isLessThanOrEqualTo(lease.toMillis() + SLACK_MILLIS);
    }

    @Test
    @Order(2)
    void holderPausedLongerThanItsLease() {
        Duration lease = Duration.ofMillis(1500);
        scenario("holder-sigstop", lease);
        Inside holder = scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        long pausedAt = scenario.now();
        scenario.workers.pause(holder.worker());
        scenario.awaitSectionsAfter(pausedAt, 3, Duration.ofSeconds(20));
        long resumedAt = scenario.now();
        assertThat(resumedAt - pausedAt).as("paused longer than the lease").isGreaterThan(lease.toNanos() / 1000);
        scenario.workers.resume(holder.worker());
        scenario.await(Duration.ofSeconds(15), "the paused holder's late write",
                () -> scenario.recorded(holder.worker(), holder.token()));
        scenario.awaitSectionsAfter(resumedAt, 3, Duration.ofSeconds(20));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(pausedAt, section -> !section.worker().equals(holder.worker()))
            .orElseThrow().readMicros() - pausedAt);
        FaultTable.add(new FaultTable.Row("holder SIGSTOP " + millis(resumedAt - pausedAt) / 100 / 10.0
                + " s (lease " + lease.toMillis() / 1000.0 + " s), then SIGCONT", verdict, recovery,
                "after the pause began", "others take the key when its lease ends; the paused holder's late write is "
                        + "refused by fencing, then isHeld() is false and a LockLostEvent arrives"));
        assertNoViolations(verdict);
        Section late = log.of(holder.worker()).stream().filter(section -> section.token() == holder.token()).findFirst()
            .orElseThrow();
        assertThat(late.verdict()).as("the paused holder's write").isNotEqualTo("A");
        assertThat(late.heldAfter()).as("isHeld() after the pause").isFalse();
        assertThat(late.lostEvent()).as("LockLostEvent after the pause").isTrue();
        assertThat(verdict.overlaps()).isPositive();
        assertThat(recovery).isLessThanOrEqualTo(lease.toMillis() + SLACK_MILLIS);
    }

    @Test
    @Order(3)
    void redisKilledAndRestartedEmpty() {
        Duration lease = Duration.ofSeconds(2);
        scenario("redis-restart", lease);
        scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        redis.stop();
        FaultScenario.sleep(300); // the outage
        redis.start();
        long restartedAt = scenario.now();
        scenario.awaitSectionsAfter(restartedAt, 4, Duration.ofSeconds(30));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(restartedAt, section -> true).orElseThrow().readMicros() - restartedAt);
        FaultTable.add(new FaultTable.Row("Redis SIGKILL, restarted empty after 0.3 s", verdict, recovery,
                "after the restart", "calls during the outage fail or wait; the lock held then is lost (no "
                        + "persistence), a second holder can overlap the first and fencing refuses the older one"));
        assertNoViolations(verdict);
        assertThat(recovery).isLessThanOrEqualTo(5_000);
    }

    @Test
    @Order(4)
    void oneProcessBlackholedLongerThanTheLease() {
        Duration lease = Duration.ofSeconds(2);
        scenario("blackhole", lease);
        Inside holder = scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        String stalled = scenario.ids().stream().filter(id -> !id.equals(holder.worker())).findFirst().orElseThrow();
        List<String> others = scenario.ids().stream().filter(id -> !id.equals(stalled)).toList();
        // the others pause their work, so the acquires sent during the stall find the key free when they land late
        others.forEach(id -> scenario.holdOff(id, true));
        FaultProxy proxy = scenario.proxies.get(stalled);
        proxy.blackhole();
        long stalledAt = scenario.now();
        FaultScenario.sleep(lease.toMillis() + 1_000);
        System.out.println("blackhole: before heal, key " + redis.command("GET", "lock:{" + FaultScenario.KEY + "}")
                + " pttl " + redis.command("PTTL", "lock:{" + FaultScenario.KEY + "}"));
        proxy.heal();
        long healedAt = scenario.now();
        FaultScenario.sleep(100);
        System.out.println("blackhole: after heal, key " + redis.command("GET", "lock:{" + FaultScenario.KEY + "}")
                + " pttl " + redis.command("PTTL", "lock:{" + FaultScenario.KEY + "}"));
        others.forEach(id -> scenario.holdOff(id, false));
        scenario.awaitSectionsAfter(healedAt, 4, Duration.ofSeconds(20));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(healedAt, section -> true).orElseThrow().readMicros() - healedAt);
        FaultTable.add(new FaultTable.Row("one process black-holed " + millis(healedAt - stalledAt) / 100 / 10.0
                + " s (lease " + lease.toSeconds() + " s), then healed", verdict, recovery, "after the heal",
                "its tryLock calls fail after leasehold.redis-timeout; the others go on; what it sent during the "
                        + "stall runs late and is taken back"));
        assertNoViolations(verdict);
        assertThat(verdict.overlaps()).isZero();
        // no acquire sent during the stall may run late and keep the key for a lease
        assertThat(recovery).as("time from the heal to the next critical section\n" + scenario.workers.tails())
            .isLessThan(lease.toMillis() / 2);
    }

    @Test
    @Order(5)
    void everyConnectionReset() {
        Duration lease = Duration.ofSeconds(2);
        scenario("connection-reset", lease);
        scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        long droppedAt = scenario.now();
        scenario.proxies.values().forEach(FaultProxy::drop);
        scenario.awaitSectionsAfter(droppedAt, 4, Duration.ofSeconds(20));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(droppedAt, section -> true).orElseThrow().readMicros() - droppedAt);
        FaultTable.add(new FaultTable.Row("every connection reset (RST)", verdict, recovery, "after the reset",
                "calls in flight fail or are retried after Lettuce reconnects; at worst the key waits for its lease"));
        assertNoViolations(verdict);
        assertThat(verdict.overlaps()).isZero();
        assertThat(recovery).isLessThanOrEqualTo(lease.toMillis() + SLACK_MILLIS);
    }

    @Test
    @Order(6)
    void subscriptionRefusedWhileTheHolderReleases() {
        Duration lease = Duration.ofSeconds(15);
        scenario = new FaultScenario("subscription-cut", resource);
        Map<String, List<String>> perWorker = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            String user = "w" + i;
            redis.command("ACL", "SETUSER", user, "on", ">pw-" + user, "~*", "&*", "+@all");
            FaultProxy proxy = FaultProxy.start(redis.host(), redis.port());
            scenario.proxies.put(user, proxy);
            perWorker.put(user, List.of("--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + proxy.port(),
                    "--spring.data.redis.username=" + user, "--spring.data.redis.password=pw-" + user));
        }
        // long sections and a long pause after each, so the releasing holder does not take the key again at once
        scenario.start(settings(lease, Duration.ofMillis(1500), Duration.ofSeconds(8)), perWorker);
        Inside holder = scenario.awaitInside(0, Duration.ofSeconds(60));
        List<String> waiters = scenario.ids().stream().filter(id -> !id.equals(holder.worker())).toList();
        for (String waiter : waiters) {
            // Redis closes the waiter's subscription connection and refuses its re-subscription
            redis.command("ACL", "SETUSER", waiter, "resetchannels");
            redis.command("CLIENT", "KILL", "USER", waiter, "TYPE", "pubsub");
        }
        scenario.await(Duration.ofSeconds(10), "the holder's release", () -> scenario.recorded(holder.worker(), holder.token()));
        long releasedAt = scenario.now();
        // the fault really happened: no waiter has a subscription now
        String clients = redis.command("CLIENT", "LIST");
        assertThat(clients.lines().filter(line -> waiters.stream().anyMatch(w -> line.contains(" user=" + w + " ")))
            .filter(line -> !line.contains(" sub=0 ") || !line.contains(" psub=0 ")))
            .as("waiters' connections with a subscription during the cut").isEmpty();
        FaultScenario.sleep(1_000);
        for (String waiter : waiters) {
            redis.command("ACL", "SETUSER", waiter, "allchannels");
        }
        scenario.await(Duration.ofSeconds(25), "a waiter takes the key", () -> scenario.takenBy(waiters, releasedAt));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(releasedAt, section -> waiters.contains(section.worker())).orElseThrow()
            .readMicros() - releasedAt);
        for (int i = 1; i <= 3; i++) {
            redis.command("ACL", "DELUSER", "w" + i);
        }
        FaultTable.add(new FaultTable.Row("waiters' subscription closed and refused for 1 s while the holder "
                + "releases (lease " + lease.toSeconds() + " s)", verdict, recovery, "after the release",
                "the release message is lost; a waiter notices the refused subscription and looks again"));
        assertNoViolations(verdict);
        assertThat(verdict.overlaps()).isZero();
        // woken within a few seconds of the release, not when the holder's lease would have ended
        assertThat(recovery).as("time from the release to a waiter's critical section\n" + scenario.workers.tails())
            .isLessThan(4_000);
    }

    @Test
    @Order(7)
    void slowRedis() {
        Duration lease = Duration.ofSeconds(3);
        scenario("slow-redis", lease);
        scenario.awaitInside(scenario.now(), Duration.ofSeconds(10));
        long sleptAt = scenario.now();
        redis.command("DEBUG", "SLEEP", "1.2"); // longer than leasehold.redis-timeout (500 ms)
        long wokeAt = scenario.now();
        scenario.awaitSectionsAfter(wokeAt, 4, Duration.ofSeconds(20));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = millis(log.firstReadAfter(wokeAt, section -> true).orElseThrow().readMicros() - wokeAt);
        FaultTable.add(new FaultTable.Row("Redis stalls " + millis(wokeAt - sleptAt) / 100 / 10.0
                + " s (DEBUG SLEEP; redis-timeout 0.5 s, lease " + lease.toSeconds() + " s)", verdict, recovery,
                "after the stall", "tryLock fails or waits longer; the held lock survives (its lease outlasts the "
                        + "stall); late acquires are taken back"));
        assertNoViolations(verdict);
        assertThat(verdict.overlaps()).isZero();
        assertThat(recovery).as("time from the end of the stall to the next critical section\n" + scenario.workers.tails())
            .isLessThan(lease.toMillis() / 2);
    }
}
