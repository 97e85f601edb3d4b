package dev.leasehold.explorer;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;

/**
 * Where the checker's lost-key excuse ends (explorer only): a holder learns that Redis lost its key only from the
 * next answer about its lease, so the checker excuses a holder not told of such a loss; once such an answer reached
 * the engine, what it does next is judged.
 * <ul>
 * <li>After the watchdog read a renewal refused (delivered, and its thread done with it), the lease is not handed on
 * inside the instance any more (issue 31 item 2); a lock handed on before that and received by its caller after it
 * is told lost with its grant.</li>
 * <li>A token reservation answered "not yours" within half the Redis timeout of its sending tells the holders that
 * handed that lease on since Redis last confirmed it, where a fault lost the key while they held it (item 3).</li>
 * <li>A release answered "not held" within half the Redis timeout tells the holder that released (wave 10's RD1:
 * a reader's refused release reported nothing).</li>
 * <li>Redis answers "not held" to a release once it granted the key to another holder meanwhile (RD2), whatever
 * ended the lease there (a clock step ahead included): {@link #releasedAfterAnotherGrant}.</li>
 * <li>After a failover without replica acknowledgement lost a key ({@link Nemesis#failover}), a renewal refused and
 * read by the watchdog tells the holder under that lease whose section was open then (issue 31 item 2: a loss by
 * failover is told to its owner).</li>
 * </ul>
 * A reply lost or dropped, or delivered once the instance began closing, tells nothing and is not judged.
 */
final class ToldChecks {

    private ToldChecks() {
    }

    /** What one instance was told, and when its engine began closing (-1: not before the end; history time). */
    record Told(String instance, RedisSaid said, long closingAt) {
    }

    static void check(Explorer run, List<HistoryChecker.Violation> violations) {
        // what Redis said is timed on the virtual clock; the history counts from the run's start
        long origin = run.world.now() - run.history.now();
        List<Told> told = run.instances.stream()
            .map(instance -> new Told(instance.name, instance.said, instance.closingAt)).toList();
        check(run.history, told, run.config.redisTimeout().toNanos(), origin, violations);
        releasedAfterAnotherGrant(run.history, told, origin, violations);
    }

    /**
     * The rules on {@code history}; {@code origin}: the virtual clock's reading at the history's time 0 (what Redis
     * said is timed on the virtual clock).
     */
    static void check(History history, List<Told> instances, long redisTimeoutNanos, long origin,
            List<HistoryChecker.Violation> violations) {
        Set<String> told = history.losses().stream().map(loss -> loss.instance() + "|" + loss.key() + "|" + loss.token())
            .collect(Collectors.toSet());
        // when each lock was first told lost
        Map<String, Long> toldAt = history.losses().stream().collect(Collectors.toMap(
                loss -> loss.instance() + "|" + loss.key() + "|" + loss.token(), History.Loss::at, Math::min));
        for (Told instance : instances) {
            List<History.Section> mine = history.sections().stream()
                .filter(section -> section.instance().equals(instance.instance())).toList();
            RedisSaid said = instance.said();
            synchronized (said) {
                for (RedisSaid.Gone refused : said.refusedRenewals) {
                    Long read = said.processedAt.get(refused);
                    if (read == null) {
                        continue;
                    }
                    long readAt = read - origin;
                    // a lock handed on before the refusal was read and delivered after it (an asynchronous caller's
                    // future completes on the deliveries' lane) is told lost with its grant: the engine knew by then
                    mine.stream().filter(section -> section.key().equals(refused.key()) && !section.reentry()
                            && section.grantedAt() > readAt && said.underLease(refused.token(), section.token())
                            && !said.firstOfBlock(refused.token(), section.token())
                            && toldAt.getOrDefault(instance.instance() + "|" + section.key() + "|" + section.token(),
                                    Long.MAX_VALUE) > section.grantedAt())
                        .findFirst()
                        .ifPresent(section -> violations.add(new HistoryChecker.Violation(section.grantedAt(),
                                "S1 a lock was handed on after its engine read Redis refuse the lease's renewal: "
                                        + section.op() + "#" + section.id() + "[" + instance.instance() + " " + section.key()
                                        + " token=" + section.token() + "]")));
                    // a failover without replica acknowledgement may lose the lock (documented), but its holder is told
                    // by the refused renewal: the holder under that lease when the watchdog read it (the read is the
                    // engine's; what it does with it is judged)
                    if (lostInFailoverBefore(history, refused.key(), readAt) && !said.refusedExtends.contains(refused)) {
                        mine.stream().filter(section -> section.key().equals(refused.key()) && section.grantedAt() <= readAt
                                && section.endAt() > readAt && said.underLease(refused.token(), section.token())
                                && !section.toldLost()
                                && !told.contains(instance.instance() + "|" + section.key() + "|" + section.token()))
                            .findFirst()
                            .ifPresent(section -> violations.add(new HistoryChecker.Violation(readAt,
                                    "S1 a failover lost a lock and its holder was never told, though its engine read"
                                            + " Redis refuse the lease's renewal: " + section.op() + "#" + section.id() + "["
                                            + instance.instance() + " " + section.key() + " token=" + section.token() + "]")));
                    }
                }
                long halfTimeout = redisTimeoutNanos / 2;
                for (RedisSaid.Gone refused : said.refusedReleases) {
                    long sentAt = refused.sentAt() - origin;
                    long at = refused.at() - origin;
                    if (at - sentAt > halfTimeout || instance.closingAt() >= 0 && instance.closingAt() <= at) {
                        continue;
                    }
                    // the holder that released (the last of the lease's sections granted before the answer) learns
                    // from it that the key was no longer its own; not where Redis confirmed the lease again after
                    // that holder ended (a reservation for a successor who then gave the key back: nobody held it
                    // when it was lost)
                    long reservedAt = said.lastReservedAt(refused.token());
                    mine.stream().filter(section -> section.key().equals(refused.key()) && !section.reentry()
                            && section.grantedAt() <= at && said.underLease(refused.token(), section.token()))
                        .max(java.util.Comparator.comparingLong(History.Section::grantedAt))
                        .filter(section -> reservedAt == Long.MIN_VALUE || reservedAt - origin <= section.endAt())
                        .filter(section -> !section.toldLost()
                                && !told.contains(instance.instance() + "|" + section.key() + "|" + section.token()))
                        .ifPresent(section -> violations.add(new HistoryChecker.Violation(at,
                                "S1 Redis answered a release with \"not held\" and its holder was never told it had lost"
                                        + " the lock: " + section.op() + "#" + section.id() + "[" + instance.instance() + " "
                                        + section.key() + (section.shared() ? " READ" : "") + " token=" + section.token()
                                        + "]")));
                }
                for (RedisSaid.Gone gone : said.goneReservations) {
                    long sentAt = gone.sentAt() - origin;
                    long at = gone.at() - origin;
                    if (at - sentAt > halfTimeout || instance.closingAt() >= 0 && instance.closingAt() <= at) {
                        continue;
                    }
                    long confirmed = said.lastConfirmedBefore(gone.token(), gone.at());
                    mine.stream().filter(section -> section.key().equals(gone.key()) && !section.reentry()
                            && said.underLease(gone.token(), section.token()) && section.endAt() <= sentAt
                            && (confirmed == Long.MIN_VALUE || confirmed - origin < section.grantedAt()) && !section.toldLost()
                            && !told.contains(instance.instance() + "|" + section.key() + "|" + section.token())
                            && lostWhileHeld(history, section))
                        .findFirst()
                        .ifPresent(section -> violations.add(new HistoryChecker.Violation(at,
                                "S1 Redis answered a token reservation with \"not yours\" and the holder before, who held"
                                        + " the key when it was lost, was never told: " + section.op() + "#" + section.id()
                                        + "[" + instance.instance() + " " + section.key() + " token=" + section.token() + "]")));
                }
            }
        }
    }

    /**
     * Redis answered "released" to a holder after it had granted the key to another holder with a higher token (a
     * writer beside a reader, or any holder beside a writer) since that holder's grant: the lease had ended in Redis,
     * so the release must answer "not held", the only answer that tells the holder (wave 10's RD2: a reader whose lease
     * ran out, still listed in the readers zset after a withdrawal granted the key to a writer, was "released").
     */
    static void releasedAfterAnotherGrant(History history, List<Told> instances, long origin,
            List<HistoryChecker.Violation> violations) {
        for (Told instance : instances) {
            RedisSaid said = instance.said();
            List<RedisSaid.Released> accepted;
            synchronized (said) {
                accepted = List.copyOf(said.acceptedReleases);
            }
            for (RedisSaid.Released release : accepted) {
                long ranAt = release.ranAt() - origin;
                history.sections().stream().filter(section -> section.instance().equals(instance.instance())
                        && section.key().equals(release.key()) && !section.reentry() && section.grantedAt() <= ranAt
                        && said.underLease(release.token(), section.token()))
                    .max(java.util.Comparator.comparingLong(History.Section::grantedAt))
                    .ifPresent(released -> history.sections().stream()
                        .filter(other -> other.key().equals(released.key()) && !other.reentry()
                                && !(other.shared() && released.shared()) && other.token() > released.token()
                                && other.grantedAt() > released.grantedAt() && other.grantedAt() < ranAt
                                && !(other.instance().equals(instance.instance())
                                        && said.underLease(release.token(), other.token())))
                        .findFirst()
                        .ifPresent(other -> violations.add(new HistoryChecker.Violation(ranAt,
                                "S1 Redis answered a release with \"released\" after it had granted the key to another"
                                        + " holder: " + released + " released, " + other + " granted meanwhile"))));
            }
        }
    }

    private static boolean lostInFailoverBefore(History history, String key, long at) {
        return history.faults().stream().anyMatch(fault -> fault.kind().equals("failover-lost")
                && fault.target().endsWith(" " + key) && fault.start() <= at);
    }

    private static boolean lostWhileHeld(History history, History.Section section) {
        return history.faults().stream().anyMatch(fault -> HistoryChecker.losesKey(fault, section.key())
                && fault.start() >= section.grantedAt() && fault.start() <= section.endAt());
    }
}
