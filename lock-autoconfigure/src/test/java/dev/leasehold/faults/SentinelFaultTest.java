package dev.leasehold.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.leasehold.faults.FaultScenario.Inside;
import dev.leasehold.faults.SectionLog.Section;
import dev.leasehold.faults.SectionLog.Verdict;
import dev.leasehold.test.redis.TestRedisSentinel;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite's failover rows: the three workers reach Redis through Sentinel (a primary, a replica, a
 * Sentinel); the replica is cut off, a worker takes the key on the primary alone, and the primary is
 * killed while that worker is inside its section. Without replica acknowledgement the promoted replica
 * never saw that grant, so a second worker takes the key: the fencing check must refuse the first one's
 * late write. With {@code leasehold.replica-ack.replicas=1} the grant after the cut is not acknowledged,
 * so it never counts: call {@link #failover} with that property, {@code expectDoubleGrant=false} and
 * {@code restartAfterPromotion=true}.
 */
@Timeout(150)
class SentinelFaultTest {

    /** Long enough for the watchdog to bridge a failover, and to tell a woken waiter from one that slept out the lease. */
    private static final Duration LEASE = Duration.ofSeconds(20);

    private TestRedisSentinel sentinel;

    private TestRedisServer resource;

    private FaultScenario scenario;

    @AfterEach
    void stop() {
        if (scenario != null) {
            scenario.close();
        }
        if (sentinel != null) {
            sentinel.close();
        }
        if (resource != null) {
            resource.close();
        }
    }

    /** {@code -Dfaults.restart-after-promotion=true} brings the old primary back right after the promotion. */
    @Test
    void failoverWithoutReplicaAcknowledgement() {
        failover("Sentinel failover without replica acknowledgement", List.of(), true, Boolean.getBoolean("faults.restart-after-promotion"));
    }

    /** The same failover with leasehold.replica-ack.replicas=1: a grant the cut-off replica does not have never counts. */
    @Test
    void failoverWithReplicaAcknowledgement() {
        failover("Sentinel failover with replica acknowledgement (replicas=1)",
                List.of("--leasehold.replica-ack.replicas=1"), false, true);
    }

    /**
     * @param extraSettings worker properties on top of the suite's (for example replica acknowledgement)
     * @param expectDoubleGrant whether a second holder must get in while the first is inside (caught by fencing)
     * @param restartAfterPromotion restart the killed primary as soon as the replica is promoted (a
     * replica-ack row needs a replica again), rather than leave it down
     */
    void failover(String fault, List<String> extraSettings, boolean expectDoubleGrant, boolean restartAfterPromotion) {
        sentinel = TestRedisSentinel.start();
        resource = TestRedisServers.start();
        scenario = new FaultScenario("sentinel-failover" + (extraSettings.isEmpty() ? "" : "-" + extraSettings.hashCode()), resource);
        List<String> settings = new ArrayList<>(FaultSuiteTest.settings(LEASE, Duration.ofMillis(150), Duration.ofMillis(60)));
        settings.addAll(extraSettings);
        Map<String, List<String>> perWorker = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            perWorker.put("w" + i, List.of("--spring.data.redis.sentinel.master=" + TestRedisSentinel.MASTER_NAME,
                    "--spring.data.redis.sentinel.nodes=" + sentinel.sentinel().host() + ":" + sentinel.sentinel().port()));
        }
        scenario.start(settings, perWorker);
        scenario.awaitSections(6, Duration.ofSeconds(60));

        String lockKey = "lock:{" + FaultScenario.KEY + "}";
        // cut while nobody holds the key: a lock held at the cut would stay on the replica (its release never
        // gets there) and block the key on the new primary until its lease ends (correct, but another row)
        scenario.ids().forEach(id -> scenario.holdOff(id, true));
        scenario.await(Duration.ofSeconds(10), "the key free on the replica",
                () -> sentinel.replica().command("EXISTS", lockKey).equals("0")
                        && sentinel.primary().command("EXISTS", lockKey).equals("0"));
        long cutAt = scenario.now();
        sentinel.cutReplication();
        scenario.ids().forEach(id -> scenario.holdOff(id, false));
        System.out.println("failover: worker pids " + scenario.ids().stream().map(id -> id + "=" + scenario.workers.pid(id)).toList()
                + "; at the cut the replica has the lock " + sentinel.replica().command("GET", lockKey) + " PTTL "
                + sentinel.replica().command("PTTL", lockKey));
        // a section granted after the cut: its lock exists on the primary only
        Optional<Inside> holder = scenario.insideWithin(cutAt + 20_000, Duration.ofSeconds(5));
        scenario.resource.command("SET", FaultWorker.FREEZE, "1");
        String holderId = holder.map(Inside::worker).orElse("");
        long killedAt = scenario.now();
        String primaryBefore = sentinel.currentPrimary();
        sentinel.primary().stop();
        scenario.await(Duration.ofSeconds(30), "Sentinel promotes the replica",
                () -> !sentinel.currentPrimary().equals(primaryBefore));
        System.out.println("failover: promoted; the new primary has the lock " + sentinel.replica().command("GET", lockKey)
                + " PTTL " + sentinel.replica().command("PTTL", lockKey) + "; the frozen holder is " + holderId);
        if (restartAfterPromotion) {
            // the crashed server comes back (empty) and Sentinel makes it a replica of the new primary: with
            // replica acknowledgement on, grants need a replica again
            sentinel.primary().start();
        }
        // keep the holder inside until another worker got in on the promoted replica (or long enough to know it cannot)
        long deadline = System.nanoTime() + Duration.ofSeconds(25).toNanos();
        long diagnoseAt = System.nanoTime() + Duration.ofSeconds(8).toNanos();
        while (System.nanoTime() < deadline && !otherInside(holderId, killedAt)) {
            if (diagnoseAt != 0 && System.nanoTime() > diagnoseAt) {
                // nobody got in for a while: what holds the key on the new primary (the promoted replica)?
                System.out.println("failover: nobody else in after 8 s; on the new primary the lock is "
                        + sentinel.replica().command("GET", lockKey) + " with PTTL " + sentinel.replica().command("PTTL", lockKey));
                diagnoseAt = 0;
            }
            FaultScenario.sleep(10);
        }
        scenario.resource.command("DEL", FaultWorker.FREEZE);
        scenario.awaitSectionsAfter(killedAt, 4, Duration.ofSeconds(40));
        SectionLog log = scenario.stop();
        Verdict verdict = log.check();
        long recovery = Math.round((log.firstReadAfter(killedAt, section -> !section.worker().equals(holderId))
            .orElseThrow().readMicros() - killedAt) / 1000.0);
        FaultTable.add(new FaultTable.Row(fault + " (replica cut off, primary SIGKILL, lease " + LEASE.toSeconds() + " s)",
                verdict, recovery, "after the kill", expectDoubleGrant
                        ? "the lock taken on the old primary is gone on the new one: a second holder gets in; the "
                                + "fencing check refuses the first holder's late write, which then sees isHeld() false and a LockLostEvent"
                        : "no grant counts that the replica did not acknowledge, so nothing is double-granted; with a single replica, locking resumes once the restarted old primary is attached as a replica"));
        System.out.println("Failure modes measured:\n" + FaultTable.markdown());
        assertThat(verdict.violations()).as("invariant violations\n" + scenario.workers.tails()).isEmpty();
        if (expectDoubleGrant) {
            assertThat(holder).as("a worker inside with a grant made after the cut").isPresent();
            assertThat(verdict.overlaps()).as("double grants (caught by fencing)").isPositive();
            Section late = log.of(holderId).stream().filter(section -> section.token() == holder.get().token())
                .findFirst().orElseThrow();
            assertThat(late.verdict()).as("the first holder's late write").isNotEqualTo("A");
        }
        else {
            assertThat(verdict.overlaps()).as("double grants").isZero();
        }
        // Locking comes back on the new primary: usually within seconds (3 s measured), but at most one lease on a
        // loaded machine, where a lock whose release never reached the replica before the cut comes back with the
        // promotion and holds the key until its lease ends (a "ghost lock", see Failure modes). With replica
        // acknowledgement and a single replica, grants wait until a replica is back (the restarted old primary,
        // re-attached by Sentinel: 17 s measured): unavailable rather than unsafe
        assertThat(recovery).as("time from the kill to another worker's section\n" + scenario.workers.tails())
            .isLessThan(LEASE.toMillis() + 10_000);
    }

    private boolean otherInside(String holderId, long afterMicros) {
        String inside = scenario.resource.command("GET", FaultWorker.INSIDE);
        if (inside == null || inside.equals("null")) {
            return false;
        }
        String[] parts = inside.split(":");
        return !parts[0].equals(holderId) && Long.parseLong(parts[2]) > afterMicros;
    }
}
