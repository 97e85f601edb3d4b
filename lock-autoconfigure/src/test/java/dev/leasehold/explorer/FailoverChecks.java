package dev.leasehold.explorer;

import java.util.List;

import dev.leasehold.campaign.HistoryChecker;

/**
 * What replica acknowledgement promises (docs/redis-guarantees.md, {@code leasehold.replica-ack}): a grant counts only
 * once the replica acknowledged it, so a failover never loses a lock a caller holds. A failover that lost a holder's
 * lock ({@link SimReplica.LostHolder}: the primary had it, the promoted replica had no trace of it) while a section
 * under that lease was open is a violation (S1: a second holder may get the key, and nothing told the first). Not
 * excused: a lease that ran out on the replica is still a trace (the holder's own estimate ends before it, as for an
 * unconfirmed renewal); a Redis restart is a fault of its own (it empties the replica too, and the checker excuses it).
 * Without acknowledgement a failover may lose locks (documented): {@link ToldChecks} judges that their holders are told.
 */
final class FailoverChecks {

    private FailoverChecks() {
    }

    static void check(Explorer run, List<HistoryChecker.Violation> violations) {
        SimReplica replica = run.redis.replica;
        if (replica == null || !replica.acknowledged) {
            return;
        }
        long origin = run.world.now() - run.history.now();
        for (SimReplica.LostHolder lost : replica.lostHolders) {
            long at = lost.at() - origin;
            for (Client.Instance instance : run.instances) {
                boolean mine;
                synchronized (instance.connection) {
                    mine = instance.connection.tokens.contains(lost.token());
                }
                if (!mine) {
                    continue;
                }
                run.history.sections().stream()
                    .filter(section -> section.instance().equals(instance.name) && section.key().equals(lost.key())
                            && section.grantedAt() <= at && section.endAt() > at
                            && instance.connection.said.underLease(lost.token(), section.token()))
                    .findFirst()
                    .ifPresent(section -> violations.add(new HistoryChecker.Violation(at, "S1 a failover lost a lock"
                            + " its holder held, though grants count only once the replica acknowledged them: "
                            + section.op() + "#" + section.id() + "[" + instance.name + " " + section.key() + " token="
                            + section.token() + "] (" + run.world.tokenName(lost.token()) + ")")));
            }
        }
    }
}
