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
 * </ul>
 * A reply lost or dropped, or delivered once the instance began closing, tells nothing and is not judged.
 */
final class ToldChecks {

    private ToldChecks() {
    }

    static void check(Explorer run, List<HistoryChecker.Violation> violations) {
        History history = run.history;
        // what Redis said is timed on the virtual clock; the history counts from the run's start
        long origin = run.world.now() - history.now();
        Set<String> told = history.losses().stream().map(loss -> loss.instance() + "|" + loss.key() + "|" + loss.token())
            .collect(Collectors.toSet());
        // when each lock was first told lost
        Map<String, Long> toldAt = history.losses().stream().collect(Collectors.toMap(
                loss -> loss.instance() + "|" + loss.key() + "|" + loss.token(), History.Loss::at, Math::min));
        for (Client.Instance instance : run.instances) {
            RedisSaid said = instance.connection.said;
            List<History.Section> mine = history.sections().stream()
                .filter(section -> section.instance().equals(instance.name)).toList();
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
                            && toldAt.getOrDefault(instance.name + "|" + section.key() + "|" + section.token(),
                                    Long.MAX_VALUE) > section.grantedAt())
                        .findFirst()
                        .ifPresent(section -> violations.add(new HistoryChecker.Violation(section.grantedAt(),
                                "S1 a lock was handed on after its engine read Redis refuse the lease's renewal: "
                                        + section.op() + "#" + section.id() + "[" + instance.name + " " + section.key()
                                        + " token=" + section.token() + "]")));
                }
                long halfTimeout = run.config.redisTimeout().toNanos() / 2;
                for (RedisSaid.Gone gone : said.goneReservations) {
                    long sentAt = gone.sentAt() - origin;
                    long at = gone.at() - origin;
                    if (at - sentAt > halfTimeout || instance.closingAt >= 0 && instance.closingAt <= at) {
                        continue;
                    }
                    long confirmed = said.lastConfirmedBefore(gone.token(), gone.at());
                    mine.stream().filter(section -> section.key().equals(gone.key()) && !section.reentry()
                            && said.underLease(gone.token(), section.token()) && section.endAt() <= sentAt
                            && (confirmed == Long.MIN_VALUE || confirmed - origin < section.grantedAt()) && !section.toldLost()
                            && !told.contains(instance.name + "|" + section.key() + "|" + section.token())
                            && lostWhileHeld(history, section))
                        .findFirst()
                        .ifPresent(section -> violations.add(new HistoryChecker.Violation(at,
                                "S1 Redis answered a token reservation with \"not yours\" and the holder before, who held"
                                        + " the key when it was lost, was never told: " + section.op() + "#" + section.id()
                                        + "[" + instance.name + " " + section.key() + " token=" + section.token() + "]")));
                }
            }
        }
    }

    private static boolean lostWhileHeld(History history, History.Section section) {
        return history.faults().stream().anyMatch(fault -> (fault.kind().equals("restart-empty")
                || fault.kind().equals("delete-key") && fault.target().endsWith(" " + section.key()))
                && fault.start() >= section.grantedAt() && fault.start() <= section.endAt());
    }
}
