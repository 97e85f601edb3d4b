package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.leasehold.campaign.History.Fault;
import dev.leasehold.campaign.History.Loss;
import dev.leasehold.campaign.History.Section;

/**
 * Checks a recorded {@link History} against the contract. Safety: (S1) two sections on a key overlap only
 * if the older holder was told it lost the lock, and a section the fenced store refused was told too;
 * (S2) fencing tokens strictly increase per key in grant order, readers' and writers' alike (a grant counts as after another only if
 * its call began after the other was granted), a re-entry is granted only while its holding is held, and every token in a loss was granted to a caller; (S3) no public method threw
 * what its contract does not name. Liveness: (L1) no wait timed out while the key stood free, in the
 * history and away from any fault (and its grace), for longer than {@code freeBound}. Leftovers (L2) come from the run.
 * Where the history carries them (the deterministic explorer's): every token block the server issued starts above every
 * token it issued before (S2), and no call ended later than its deadline plus {@link #lateBound} (L3).
 */
public final class HistoryChecker {

    /** What a check found. {@code maxFreeMillis}: the longest free stretch inside a timed-out wait (L1). */
    public record Findings(List<Violation> violations, int overlaps, int toldLost, double maxFreeMillis) {

        public boolean clean() {
            return violations.isEmpty();
        }
    }

    /** One broken rule, at a time of the history (where the timeline marks it). */
    public record Violation(long at, String text) {

        @Override
        public String toString() {
            return text;
        }
    }

    private final long freeBoundNanos;

    /** How long past its deadline a wait may end (L3); Long.MAX_VALUE: not judged. */
    private long lateBoundNanos = Long.MAX_VALUE;

    /** @param freeBoundMillis how long a key may stand free inside a wait that then timed out (L1) */
    public HistoryChecker(long freeBoundMillis) {
        this.freeBoundNanos = freeBoundMillis * 1_000_000L;
    }

    /** Judges waits against their deadlines too (L3): none may end later than {@code lateBoundNanos} after it. */
    public HistoryChecker lateBound(long lateBoundNanos) {
        this.lateBoundNanos = lateBoundNanos;
        return this;
    }

    public Findings check(History history, List<String> leftovers) {
        List<Violation> violations = new ArrayList<>();
        List<Section> sections = history.sections();
        Set<String> told = new HashSet<>();
        history.losses().forEach(loss -> told.add(loss.instance() + "|" + loss.key() + "|" + loss.token()));
        int overlaps = 0;
        Map<String, List<Section>> byKey = sections.stream().collect(Collectors.groupingBy(Section::key));
        Map<String, Section> holdings = new java.util.HashMap<>();
        sections.stream().filter(section -> !section.reentry()).sorted(Comparator.comparingLong(Section::grantedAt))
            .forEach(section -> holdings.putIfAbsent(holdingKey(section), section));
        handOffRoots(history.issued(), sections, holdings);
        Map<String, Long> issuedAt = new java.util.HashMap<>();
        // a quorum's lease begins on its nodes while the call is on its way, before the quorum decided: from the call
        history.issued().forEach(block -> issuedAt.putIfAbsent(block.key() + "|" + block.first(), block.since()));
        for (List<Section> onKey : byKey.values()) {
            onKey.sort(Comparator.comparingLong(Section::grantedAt));
            overlaps += overlaps(onKey, told, history.faults(), violations, holdings, issuedAt);
            tokensIncrease(onKey, violations, section -> restartedWhileHeld(section.key(),
                    leaseStart(holdingOf(section, holdings), issuedAt), section.grantedAt() + 1, history.faults()),
                    (highest, section) -> countersLost(history.faults(), highest.grantedAt(), section.grantedAt()));
        }
        for (Section section : sections) {
            if (section.reentry() && !section.heldBefore()) {
                violations.add(new Violation(section.grantedAt(),
                        "S1 a re-entry was granted after its holding said it was no longer held: " + section));
            }
            if (!section.accepted() && !isTold(section, told)
                    && !restartedWhileHeld(section.key(), leaseStart(holdingOf(section, holdings), issuedAt),
                            section.endAt(), history.faults())
                    && !nodesKeyLostWhileHeld(section.key(), leaseStart(holdingOf(section, holdings), issuedAt),
                            section.endAt(), history.faults())) {
                violations.add(new Violation(section.endAt(),
                        "S1 the fenced store refused a holder that was never told its lock was lost: " + section));
            }
        }
        lossesWereGranted(history.losses(), sections, violations);
        history.failures().stream().filter(failure -> !failure.documented()).forEach(failure -> violations.add(new Violation(
                failure.at(), "S3 " + failure.op() + " on " + failure.key() + " threw " + failure.type() + ": " + failure.message())));
        issuedTokensIncrease(history.issued(), history.faults(), violations);
        late(history.deadlines(), violations);
        FreeKeyChecks free = new FreeKeyChecks(freeBoundNanos);
        double maxFree = free.freeWhileWaiting(history, byKey, violations);
        FreeKeyChecks.passedOver(history, byKey, violations);
        long end = history.now();
        leftovers.forEach(leftover -> violations.add(new Violation(end, "L2 left behind: " + leftover)));
        int toldLost = (int) sections.stream().filter(section -> isTold(section, told)).count();
        return new Findings(violations, overlaps, toldLost, maxFree);
    }

    private static boolean isTold(Section section, Set<String> told) {
        return section.toldLost() || told.contains(section.instance() + "|" + section.key() + "|" + section.token());
    }

    /** Sections of one holding: a re-entry's (same instance, key and token) is the first grant of that token. */
    private static String holdingKey(Section section) {
        return section.instance() + "|" + section.key() + "|" + section.token();
    }

    /**
     * The grant a re-entry re-entered (itself for a grant): a fault that lost the key while that lock was held excuses
     * its re-entries too, which use the same lock and token and ask Redis nothing.
     */
    private static Section holdingOf(Section section, Map<String, Section> holdings) {
        return section.token() > 0 ? holdings.getOrDefault(holdingKey(section), section) : section;
    }

    /**
     * A lock handed on inside this JVM (its token from a block Redis reserved for a grant or a reservation, not the
     * block's first) continues the lease Redis last confirmed at that block's first token, asking Redis nothing: a
     * fault that lost the key while that lease ran excuses it as it excuses the grant (both learn the loss from the
     * same later answer; documented in docs/how-it-works.md). Only where the history knows the blocks (the explorer).
     */
    private static void handOffRoots(List<History.Issued> issued, List<Section> sections, Map<String, Section> holdings) {
        for (Section section : sections) {
            if (section.reentry() || section.token() <= 0) {
                continue;
            }
            for (History.Issued block : issued) {
                if (block.key().equals(section.key()) && block.first() < section.token() && section.token() <= block.last()) {
                    Section root = holdings.get(section.instance() + "|" + section.key() + "|" + block.first());
                    if (root != null && root.grantedAt() <= section.grantedAt()) {
                        holdings.put(holdingKey(section), root);
                    }
                    break;
                }
            }
        }
    }

    /**
     * When the lease a section holds began in Redis: the grant (or reservation) that issued its token, which may be
     * a moment before the caller received it (a key lost in between was lost under that lease).
     */
    private static long leaseStart(Section section, Map<String, Long> issuedAt) {
        Long at = issuedAt.get(section.key() + "|" + section.token());
        return at != null ? Math.min(at, section.grantedAt()) : section.grantedAt();
    }

    private static int overlaps(List<Section> onKey, Set<String> told, List<Fault> faults, List<Violation> violations,
            Map<String, Section> holdings, Map<String, Long> issuedAt) {
        int overlaps = 0;
        for (int i = 0; i < onKey.size(); i++) {
            Section a = onKey.get(i);
            for (int j = i + 1; j < onKey.size() && onKey.get(j).grantedAt() < a.keptUntil(); j++) {
                Section b = onKey.get(j);
                if ((a.shared() && b.shared()) || sameHolding(a, b) || !a.overlaps(b)) {
                    continue;
                }
                overlaps++;
                // the lower token is the older grant; without a token (the Lock view) the earlier grant
                Section older = a.token() > 0 && b.token() > 0 && b.token() < a.token() ? b : a;
                Section newer = older == a ? b : a;
                Section olderHolding = holdingOf(older, holdings);
                if (!isTold(older, told) && !keptKeyLost(olderHolding, newer, faults)
                        && !lostInRestart(older.key(), leaseStart(olderHolding, issuedAt), newer, faults)) {
                    violations.add(new Violation(b.grantedAt(),
                            "S1 two holders inside at once, the older never told it lost the lock: " + a + " and " + b));
                }
            }
        }
        return overlaps;
    }

    /**
     * The newer grant came after the older's release, inside its {@code holdAtLeast}, and a fault that loses
     * keys (Redis restarted empty, the key deleted as by a failover) came in between: the kept key was lost
     * with nobody left to tell (the holder had released it), as documented.
     */
    private static boolean keptKeyLost(Section older, Section newer, List<Fault> faults) {
        return newer.grantedAt() >= older.endAt() && faults.stream().anyMatch(fault -> fault.start() < newer.grantedAt()
                && fault.end() > older.grantedAt() && (losesKey(fault, older.key()) || losesNodesKey(fault, older.key())));
    }

    /**
     * Redis restarted empty while the older held the key, before the newer grant: the lock was lost with the
     * data, and its holder learns it only when a renewal or its release gets an answer; a release sent while
     * the connections were being re-made fails, and the holder is not told (documented: a restart without
     * persistence loses locks; the fencing token protects the resource).
     */
    private static boolean lostInRestart(String key, long olderLeaseStart, Section newer, List<Fault> faults) {
        return faults.stream().anyMatch(fault -> (losesKey(fault, key) || losesNodesKey(fault, key))
                && fault.start() >= olderLeaseStart
                && fault.start() < newer.grantedAt());
    }

    /**
     * A fault that loses the key's data: Redis restarted empty, the key deleted as by a failover that lost the
     * write, or the server's clock stepped ahead, ending leases early (the explorer's nemesis), or a failover without
     * replica acknowledgement that lost the key's last writes ("failover-lost", the explorer's replica): like a
     * restart, its holder learns it only from an answer that comes after (docs/redis-guarantees.md: asynchronous
     * replication may lose a lock).
     */
    public static boolean losesKey(Fault fault, String key) {
        return fault.kind().equals("restart-empty") || fault.kind().equals("clock-step")
                || ((fault.kind().equals("delete-key") || fault.kind().equals("failover-lost"))
                        && fault.target().endsWith(" " + key));
    }

    /**
     * A quorum node lost the key without restarting (as by a failover to a replica that missed it: outside the quorum's
     * model, whose nodes have no replicas): a lock that rested on a bare majority is lost, and its holder learns it
     * from the next answer, as on one server. Excuses S1 as a lost key does, never S2 (the counters stay).
     */
    private static boolean losesNodesKey(Fault fault, String key) {
        return fault.kind().equals("node-delete-key") && fault.target().endsWith(" " + key);
    }

    private static boolean nodesKeyLostWhileHeld(String key, long leaseStart, long endAt, List<Fault> faults) {
        return faults.stream().anyMatch(fault -> losesNodesKey(fault, key) && fault.start() >= leaseStart
                && fault.start() < endAt);
    }

    /**
     * Redis restarted empty while the section held the key: its lock was lost with the data, and a release that
     * failed meanwhile (the connection being re-made) tells nobody (documented, like lostInRestart).
     */
    private static boolean restartedWhileHeld(String key, long leaseStart, long endAt, List<Fault> faults) {
        return faults.stream().anyMatch(fault -> losesKey(fault, key) && fault.start() >= leaseStart
                && fault.start() < endAt);
    }

        /** A re-entry and the holding it re-entered (same instance, same token). */
    private static boolean sameHolding(Section a, Section b) {
        return a.instance().equals(b.instance()) && a.token() == b.token() && a.token() > 0;
    }

    /**
     * S2. {@code keyLostUnder}: a local hand-off whose lease (the grant or reservation it continues) Redis lost by a
     * fault before it was handed on: it carries a token of that lease's block, which may be below one Redis issued
     * since (the documented limit of a lost key, which the fenced store refuses, as S1 checks); a grant by Redis
     * itself is never excused (its lease starts at its grant).
     */
    private static void tokensIncrease(List<Section> onKey, List<Violation> violations,
            java.util.function.Predicate<Section> keyLostUnder,
            java.util.function.BiPredicate<Section, Section> countersLostBetween) {
        // a re-entry is not a grant (no new token): S1 judges it with its holding. Readers too: every handle's token is
        // strictly increasing per key (docs/lock-service.md), a reader's above every grant before its call, and a writer's
        // above every reader's before it
        List<Section> grants = onKey.stream()
            .filter(section -> !section.reentry() && section.token() > 0)
            .toList();
        // sorted by grant time: the highest token granted before each call began, found by binary search
        long[] grantedAt = grants.stream().mapToLong(Section::grantedAt).toArray();
        Section[] highestSoFar = new Section[grants.size()];
        for (int i = 0; i < grants.size(); i++) {
            Section previous = i == 0 ? null : highestSoFar[i - 1];
            Section current = grants.get(i);
            highestSoFar[i] = previous == null || current.token() > previous.token() ? current : previous;
        }
        for (Section section : grants) {
            int before = lastBefore(grantedAt, section.callStart());
            if (before < 0) {
                continue;
            }
            Section highest = highestSoFar[before];
            if (section.token() <= highest.token() && highest != section && !keyLostUnder.test(section)
                    && !countersLostBetween.test(highest, section)) {
                violations.add(new Violation(section.grantedAt(), "S2 fencing token did not increase: " + highest
                        + " was granted before the call of " + section + " began"));
            }
        }
    }

    private static int lastBefore(long[] sorted, long value) {
        int low = 0;
        int high = sorted.length - 1;
        int found = -1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (sorted[mid] < value) {
                found = mid;
                low = mid + 1;
            }
            else {
                high = mid - 1;
            }
        }
        return found;
    }

    /**
     * S2 at the server: every token block it handed out on a key starts above every token it handed out before the call
     * that got it began (one server: before it; a quorum: before its call, see {@link History.Issued#since}).
     */
    private static void issuedTokensIncrease(List<History.Issued> issued, List<Fault> faults, List<Violation> violations) {
        for (int i = 0; i < issued.size(); i++) {
            History.Issued block = issued.get(i);
            // the data lost since (a restart, a key deleted; a quorum node's counters): the next token rests on the
            // clock alone, or on the counters left (documented); only blocks handed out after the last loss count. Not
            // a failover: the promoted server's clock is past every token handed out before, so tokens never go back
            // across it (docs/redis-guarantees.md, the clock rule of fencing tokens)
            long lostAt = faults.stream().filter(fault -> (losesKey(fault, block.key())
                    && !fault.kind().equals("failover-lost") || fault.kind().equals("node-restart-empty"))
                    && fault.start() <= block.at())
                .mapToLong(Fault::start).max().orElse(Long.MIN_VALUE);
            History.Issued highest = null;
            for (int j = 0; j < i; j++) {
                History.Issued previous = issued.get(j);
                if (previous.key().equals(block.key()) && previous.at() <= block.since() && previous.at() > lostAt
                        && (highest == null || previous.last() > highest.last())) {
                    highest = previous;
                }
            }
            if (highest != null && block.first() <= highest.last()) {
                violations.add(new Violation(block.at(), "S2 the server handed out fencing token " + block.first()
                        + " on " + block.key() + " at " + History.ms(block.at()) + " ms, not above " + highest.last()
                        + " handed out at " + History.ms(highest.at()) + " ms"));
            }
        }
    }

    /**
     * A quorum node restarted empty between two grants: its fencing counters went with its data, and a token may repeat
     * if it was the only node two majorities share (documented in docs/quorum.md). The lock itself stays safe (the
     * restarted node does not count for a lease), so this excuses S2 only, never S1.
     */
    private static boolean countersLost(List<Fault> faults, long from, long to) {
        return faults.stream().anyMatch(fault -> fault.kind().equals("node-restart-empty") && fault.start() >= from
                && fault.start() <= to);
    }

    /** L3: no call still waiting (or returning) later than its deadline and the bound. */
    private void late(List<History.Deadline> deadlines, List<Violation> violations) {
        for (History.Deadline wait : deadlines) {
            if (wait.end() - wait.deadline() > lateBoundNanos) {
                violations.add(new Violation(Math.min(wait.end(), wait.deadline() + lateBoundNanos), "L3 " + wait.instance()
                        + " waited for " + wait.key() + " from " + History.ms(wait.start()) + " ms with its deadline at "
                        + History.ms(wait.deadline()) + " ms, and " + (wait.end() == Long.MAX_VALUE ? "was still waiting"
                                : "returned only at " + History.ms(wait.end()) + " ms")));
            }
        }
    }

    private static void lossesWereGranted(List<Loss> losses, List<Section> sections, List<Violation> violations) {
        Set<String> granted = sections.stream()
            .map(section -> section.instance() + "|" + section.key() + "|" + section.token())
            .collect(Collectors.toSet());
        for (Loss loss : losses) {
            if (loss.token() <= 0 || !granted.contains(loss.instance() + "|" + loss.key() + "|" + loss.token())) {
                violations.add(new Violation(loss.at(), "S2 a loss was reported for a token no caller was given: " + loss));
            }
        }
    }
}
