package dev.leasehold.campaign;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.leasehold.campaign.History.Fault;
import dev.leasehold.campaign.History.Section;
import dev.leasehold.campaign.History.Wait;
import dev.leasehold.campaign.HistoryChecker.Violation;

/**
 * The liveness rule L1 of {@link HistoryChecker}: no wait timed out while its key stood free for longer than a
 * bound, away from faults, and none while other instances were granted the key more often than first come, first
 * served allows.
 */
final class FreeKeyChecks {

    private final long freeBoundNanos;

    FreeKeyChecks(long freeBoundNanos) {
        this.freeBoundNanos = freeBoundNanos;
    }

    /** L1: the longest stretch inside each timed-out wait when no section held the key and no fault was near. */
    double freeWhileWaiting(History history, Map<String, List<Section>> byKey, List<Violation> violations) {
        List<Fault> faults = history.faults();
        long longest = 0;
        for (Wait wait : history.waits()) {
            if (!wait.outcome().equals("timed-out")) {
                continue;
            }
            List<Section> onKey = byKey.getOrDefault(wait.key(), List.of());
            long cursor = wait.start();
            long longestHere = 0;
            long freeFrom = -1;
            for (Section section : onKey) {
                if (section.keptUntil() <= cursor) {
                    continue;
                }
                if (section.grantedAt() >= wait.end()) {
                    break;
                }
                if (section.grantedAt() > cursor) {
                    long gap = judgedPart(cursor, section.grantedAt(), faults);
                    if (gap > longestHere) {
                        longestHere = gap;
                        freeFrom = cursor;
                    }
                }
                cursor = Math.max(cursor, section.keptUntil());
            }
            if (cursor < wait.end()) {
                long gap = judgedPart(cursor, wait.end(), faults);
                if (gap > longestHere) {
                    longestHere = gap;
                    freeFrom = cursor;
                }
            }
            longest = Math.max(longest, longestHere);
            if (longestHere > freeBoundNanos) {
                violations.add(new Violation(wait.end(), "L1 " + wait.instance() + " waited for " + wait.key() + " from " + History.ms(wait.start())
                        + " to " + History.ms(wait.end()) + " ms and timed out, while the key stood free for "
                        + History.ms(longestHere) + " ms from " + History.ms(freeFrom) + " ms, no fault near; "
                        + (wait.detail().isEmpty() ? "" : "after the wait: " + wait.detail() + "; ") + "around it: "
                        + around(history, onKey, wait.key(), freeFrom)));
            }
        }
        return longest / 1e6;
    }

    /**
     * L1, first come first served: a wait that timed out while the other instances were granted the key
     * {@value #PASSED_OVER} times or more, away from faults. Queued in Redis after its first try, an instance is
     * served after the turns of those queued before it, each bounded (a turn takes only the waiters that came
     * by shortly after its grant); a JVM whose waiters are stuck locally (a stranded key) never gets there.
     */
    static void passedOver(History history, Map<String, List<Section>> byKey, List<Violation> violations) {
        List<Fault> faults = history.faults();
        for (Wait wait : history.waits()) {
            if (!wait.outcome().equals("timed-out") || judgedPart(wait.start(), wait.end(), faults) < wait.end() - wait.start()) {
                continue;
            }
            long othersGranted = byKey.getOrDefault(wait.key(), List.of()).stream()
                .filter(section -> !section.shared() && !section.reentry() && !section.instance().equals(wait.instance())
                        && section.grantedAt() > wait.start() && section.grantedAt() < wait.end())
                .count();
            if (othersGranted >= PASSED_OVER) {
                violations.add(new Violation(wait.end(), "L1 " + wait.instance() + " waited for " + wait.key() + " from "
                        + History.ms(wait.start()) + " to " + History.ms(wait.end()) + " ms and timed out while other "
                        + "instances were granted it " + othersGranted + " times, no fault near"
                        + (wait.detail().isEmpty() ? "" : "; after the wait: " + wait.detail())));
            }
        }
    }

    /**
     * Grants to others within one timed-out wait that first come, first served cannot explain: two instances
     * queued ahead, each turn at most {@code leasehold.hand-off.max-turn} (64) hand-offs, with room to spare.
     */
    static final int PASSED_OVER = 150;

    /** The sections just before and after {@code at}, and the waits on the key that ended near it. */
    private static String around(History history, List<Section> onKey, String key, long at) {
        String before = onKey.stream().filter(section -> section.keptUntil() <= at + 1)
            .max(Comparator.comparingLong(Section::keptUntil)).map(Section::toString).orElse("none");
        String after = onKey.stream().filter(section -> section.grantedAt() > at)
            .min(Comparator.comparingLong(Section::grantedAt)).map(Section::toString).orElse("none");
        String ended = history.waits().stream()
            .filter(wait -> wait.key().equals(key) && wait.end() > at - 50_000_000L && wait.end() < at + 1_500_000_000L)
            .map(wait -> wait.instance() + " " + wait.outcome() + "@" + History.ms(wait.end()))
            .collect(Collectors.joining(", "));
        return "before " + before + ", after " + after + ", waits ended " + ended;
    }

    /** The part of [from, to] away from every fault (its window plus the grace after it). */
    private static long judgedPart(long from, long to, List<Fault> faults) {
        long judged = to - from;
        for (Fault fault : faults) {
            long start = Math.max(from, fault.start());
            long end = Math.min(to, fault.end() + fault.graceNanos());
            if (end > start) {
                judged -= end - start;
            }
        }
        return Math.max(0, judged);
    }
}
