package dev.leasehold.engine.quorum;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.engine.Await;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LockHandle#extend} in quorum mode, on five real redis-server processes: the extended lease keeps the
 * clock-drift allowance, and a node that restarts afterwards waits for the extended lease before it counts.
 */
@Timeout(90)
class QuorumLeaseExtensionTest {

    @RegisterExtension
    static final QuorumFixture nodes = QuorumFixture.perClass(5);

    @Test
    void anExtendedLeaseCountsOnlyWhatTheNodesGuaranteeLikeAGrant() {
        LockEngineSettings settings = QuorumFixture.settings(Duration.ofSeconds(3));
        QuorumLockServer quorum = nodes.quorum(settings);
        DefaultLockEngine client = nodes.client(quorum, settings);
        long guaranteed = quorum.validMillis(60_000); // 60 s less 1% drift and 2 ms: 59,398 ms

        try (LockHandle granted = client.tryLock("granted-60s", Duration.ZERO, Duration.ofSeconds(60)).orElseThrow();
                LockHandle extended = client.tryLock("extended-60s", Duration.ZERO, Duration.ofSeconds(3)).orElseThrow()) {
            assertThat(extended.extend(Duration.ofSeconds(60))).isTrue();

            assertThat(granted.remainingLease().toMillis()).isLessThanOrEqualTo(guaranteed);
            // before the fix the extension counted the whole 60 s (about 59,990 ms left)
            assertThat(extended.remainingLease().toMillis()).isLessThanOrEqualTo(guaranteed)
                .isGreaterThan(guaranteed - 5_000);
        }
    }

    @Test
    void aNodeRestartedAfterAnExtendWaitsForTheExtendedLease() {
        Assumptions.assumeTrue(nodes.controllable(), "needs redis-server processes this test may stop");
        LockEngineSettings settings = QuorumFixture.settings(Duration.ofSeconds(3));
        DefaultLockEngine first = nodes.client(settings);
        QuorumLockServer secondsQuorum = nodes.quorum(settings);
        DefaultLockEngine second = nodes.client(secondsQuorum, settings);
        LockHandle firsts = first.tryLock("extended", Duration.ZERO, Duration.ofSeconds(3)).orElseThrow();
        LockHandle seconds = second.tryLock("own", Duration.ZERO, Duration.ofSeconds(3)).orElseThrow();
        // both clients have used a 60 s lease, only through extend
        assertThat(firsts.extend(Duration.ofSeconds(60))).isTrue();
        assertThat(seconds.extend(Duration.ofSeconds(60))).isTrue();

        for (int i = 2; i <= 4; i++) { // a majority restarts empty: "extended" is left on nodes 0 and 1 only
            nodes.servers.get(i).stop();
            nodes.servers.get(i).start();
        }
        long restarted = System.nanoTime();
        Await.until(Duration.ofSeconds(15), "the second client noticed the three restarts",
                () -> secondsQuorum.nodeHealth().subList(2, 5).stream().allMatch(QuorumNodeHealth::restartedAndWaiting));
        assertThat(secondsQuorum.nodeHealth().subList(2, 5))
            .allSatisfy(node -> assertThat(node.countsAgainInMillis()).isGreaterThan(30_000));

        // past the configured lease-time (3 s), which is all the restarted nodes waited for before the fix
        Await.until(Duration.ofSeconds(10), "the configured lease-time has passed since the restarts",
                () -> System.nanoTime() - restarted > Duration.ofMillis(3500).toNanos());
        Optional<LockHandle> taken;
        try {
            taken = second.tryLock("extended", Duration.ofSeconds(1), null);
        }
        catch (LockAcquisitionException ex) { // too few counted nodes answered: not granted either
            taken = Optional.empty();
        }
        taken.ifPresent(LockHandle::close);
        assertThat(firsts.isHeld()).isTrue();
        assertThat(taken).as("granted to the second client while the first still holds its extended lock").isEmpty();
        firsts.close();
        seconds.close();
    }
}
