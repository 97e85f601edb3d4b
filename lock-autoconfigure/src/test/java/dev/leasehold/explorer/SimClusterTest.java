package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.LockMode;
import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockServer.Renewal;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated Cluster's routing in mid-migration, the production {@code RenewalBatches} over it (a batch whose first
 * lock moved follows the ASK with ASKING and still renews the slot's lock that has not moved), and S4 on a crafted
 * answer. {@link SimClusterMatchesScriptsTest} compares the routing with a real Cluster.
 */
class SimClusterTest {

    private final SimWorld world = new SimWorld();

    private final History history = new History(world::now);

    private final SimRedis data = new SimRedis(world, FairQueue.DEFAULTS, (channel, message) -> {
    });

    /** Three locks in one slot, one on another master (as a Cluster run's). */
    private final List<String> keys = ClusterRun.keys(4, 3);

    private final ClusterRun run = new ClusterRun(world, new java.util.Random(1), history, data, keys, 3);

    private final SimCluster cluster = run.cluster;

    private final int slot = SimCluster.slot(lock(0));

    private final int source = cluster.masterOf(slot);

    /** The third master: neither the slot's nor the other lock's. */
    private final int target = 3 - source - cluster.masterOf(SimCluster.slot(lock(3)));

    private String lock(int key) {
        return SimCluster.names(keys.get(key)).lock();
    }

    private void hold(int key, String token) {
        data.strings.set(lock(key), token + "@1", 30_000);
    }

    /** k0 moved to the target, the slot's two other locks not yet. */
    private void migrateFirstLock() {
        cluster.startMigration(slot, target, List.of(keys.get(0), keys.get(1), keys.get(2)));
        cluster.moveNext();
    }

    @Test
    void aMigratingSlotsLocksAreServedWhereTheyAreAndReadAsAbsentWhereTheyAreNot() {
        hold(0, "a");
        hold(1, "b");
        hold(3, "d");
        migrateFirstLock();
        List<String> args = List.of("3000", "a", lock(1), "b", lock(2), "c", lock(3), "d");
        // the source sends the call that starts with a moved lock to the target
        assertThat(cluster.renewOnNode(source, false, lock(0), args)).isEqualTo(new SimCluster.Redirect(true, target, slot));
        // there, with ASKING, the slot's lock that has not moved reads as absent (-2), one never taken too, another
        // master's is refused (-1)
        assertThat(cluster.renewOnNode(target, true, lock(0), args)).isEqualTo(List.of(1L, -2L, -2L, -1L));
        // without ASKING the importing master sends it back to the source
        assertThat(cluster.renewOnNode(target, false, lock(0), args)).isEqualTo(new SimCluster.Redirect(false, source, slot));
        // on the source a lock still there is served, a moved one is not (-1)
        assertThat(cluster.renewOnNode(source, false, lock(1), List.of("3000", "b", lock(0), "a")))
            .isEqualTo(List.of(1L, -1L));
        // a batch whose keys the migration split cannot run on either side
        assertThat(cluster.renewBatchOn(source, false, List.of(lock(0), lock(1)), List.of("3000", "a", "b")))
            .isInstanceOf(RuntimeException.class);
        assertThat(cluster.renewBatchOn(target, true, List.of(lock(0), lock(1)), List.of("3000", "a", "b")))
            .isInstanceOf(RuntimeException.class);
        cluster.moveNext();
        cluster.moveNext();
        cluster.finishMigration();
        assertThat(cluster.renewOnNode(source, false, lock(0), args)).isEqualTo(new SimCluster.Redirect(false, target, slot));
        assertThat(cluster.renewOnNode(target, false, lock(0), args)).isEqualTo(List.of(1L, 1L, -2L, -1L));
    }

    @Test
    void theWatchdogsBatchRenewsTheSlotsUnmovedLockAfterFollowingTheAsk() {
        hold(0, "a");
        hold(1, "b");
        migrateFirstLock();
        SimClusterConnection connection = run.connection("i0", data);
        List<Renewal> renewals = List.of(
                new Renewal(SimCluster.names(keys.get(0)), LockMode.EXCLUSIVE, "a", 3000),
                new Renewal(SimCluster.names(keys.get(1)), LockMode.EXCLUSIVE, "b", 3000));
        List<CompletableFuture<Boolean>> answers = connection.renewAll(renewals);
        List<String> steps = drive(connection, answers);
        assertThat(answers).allMatch(answer -> answer.getNow(null) == Boolean.TRUE);
        // the call to the source, its ASK followed with ASKING, and k1 asked on its own
        assertThat(steps).hasSize(3);
        assertThat(steps.get(1)).contains("renew-node m" + target + " ASKING");
        assertThat(steps.get(2)).contains(" renew " + keys.get(1));
        List<HistoryChecker.Violation> violations = new ArrayList<>();
        run.check(violations);
        assertThat(violations).isEmpty();
    }

    @Test
    void anAnswerNotHeldForALockRedisStillHoldsForItsOwnerIsAFalseLoss() {
        hold(0, "a");
        SimClusterConnection connection = run.connection("i0", data);
        run.answeredNotHeld(connection, SimCluster.names(keys.get(0)), "a"); // Redis holds it for "a": wrong
        run.answeredNotHeld(connection, SimCluster.names(keys.get(0)), "x"); // another owner's: right
        run.answeredNotHeld(connection, SimCluster.names(keys.get(1)), "b"); // gone: right
        List<HistoryChecker.Violation> violations = new ArrayList<>();
        run.check(violations);
        assertThat(violations).hasSize(1);
        assertThat(violations.get(0).text()).startsWith("S4 ").contains(keys.get(0));
    }

    /** Runs and answers the connection's steps until every answer is in; what each step was. */
    private static List<String> drive(SimClusterConnection connection, List<CompletableFuture<Boolean>> answers) {
        List<String> steps = new ArrayList<>();
        for (int i = 0; i < 20 && !answers.stream().allMatch(CompletableFuture::isDone); i++) {
            if (connection.hasSent()) {
                connection.runNext(false);
                steps.add(connection.redis.world.trace.get(connection.redis.world.trace.size() - 1));
            }
            else if (connection.hasAnswered()) {
                connection.answerNext(false);
            }
        }
        return steps;
    }
}
