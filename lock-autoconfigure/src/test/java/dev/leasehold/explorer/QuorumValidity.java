package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;

/**
 * The quorum's own promise (Redlock's safety), judged on its verdicts (quorum runs): no exclusive grant while another
 * owner's lease is still valid, from the quorum's grant to the end of its validity ({@code validMillis} after the send
 * of its grant or last confirmed renewal), its release or take-back sent, or a refusal delivered. With the faults kept
 * to a minority of the nodes this holds whatever the history says of who was told: on one server a lost key excuses a
 * holder told later (S1), in a quorum no minority fault may lose a lock. Excused: a node that lost the key without
 * restarting (outside the quorum's model, whose nodes have no replicas).
 */
final class QuorumValidity {

    /** One owner token's lease as the quorum said it: valid from its grant until {@code until}. */
    private static final class Lease {

        final String instance;

        final String key;

        final boolean shared;

        /** When its call began: its nodes granted it from there, before the quorum decided. */
        final long since;

        final long grantedAt;

        long until;

        Lease(String instance, String key, boolean shared, long since, long grantedAt, long until) {
            this.instance = instance;
            this.key = key;
            this.shared = shared;
            this.since = since;
            this.grantedAt = grantedAt;
            this.until = until;
        }
    }

    /** Owner tokens' leases, in grant order; the violations found as grants came (history time). */
    private final Map<String, Lease> leases = new LinkedHashMap<>();

    /** Owner tokens whose release or take-back was sent: validity ends there, also for a grant decided after it. */
    private final Map<String, Long> endedAt = new LinkedHashMap<>();

    /** A grant within another owner's validity: when, on which key, since when the other held it, and what happened. */
    private record Conflict(long at, String key, long heldSince, String what) {
    }

    private final List<Conflict> conflicts = new ArrayList<>();

    /**
     * A grant decided now ({@code at}) by a call that began at {@code since}, valid until {@code until}; judged against
     * every other lease valid now.
     */
    synchronized void granted(String instance, String key, String token, boolean shared, long since, long at,
            long until) {
        Long ended = endedAt.get(token);
        Lease lease = new Lease(instance, key, shared, since, at, ended != null ? Math.min(ended, until) : until);
        leases.put(token, lease);
        if (ended != null) {
            return; // taken back before the quorum decided (its caller gave up): nobody relies on it
        }
        for (Map.Entry<String, Lease> other : leases.entrySet()) {
            Lease held = other.getValue();
            if (!other.getKey().equals(token) && held.key.equals(key) && !(held.shared && shared)
                    && held.grantedAt <= at && at < held.until) {
                conflicts.add(new Conflict(at, key, Math.min(held.since, since), ms(at) + " ms: " + instance + " was granted "
                        + key + (shared ? " READ" : "") + " while " + held.instance + "'s " + (held.shared ? "read " : "")
                        + "lease, granted at " + ms(held.grantedAt) + " ms, was valid until "
                        + ms(held.until) + " ms"));
            }
        }
    }

    /** A renewal (or a token reservation, which renews) confirmed: valid until {@code until}. */
    synchronized void confirmed(String token, long until) {
        Lease lease = leases.get(token);
        if (lease != null && !endedAt.containsKey(token)) {
            lease.until = Math.max(lease.until, until);
        }
    }

    /** The holder stops relying on the lease now (a release or take-back sent, a refusal delivered). */
    synchronized void ended(String token, long at) {
        endedAt.putIfAbsent(token, at);
        Lease lease = leases.get(token);
        if (lease != null) {
            lease.until = Math.min(lease.until, at);
        }
    }

    private static String ms(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6);
    }

    /** Q1 for every grant made within another owner's validity, unless a node lost that key since either call began. */
    synchronized void check(List<History.Fault> faults, List<HistoryChecker.Violation> violations) {
        for (Conflict conflict : conflicts) {
            boolean keyLost = faults.stream().anyMatch(fault -> fault.kind().equals("node-delete-key")
                    && fault.target().endsWith(" " + conflict.key()) && fault.start() >= conflict.heldSince()
                    && fault.start() <= conflict.at());
            if (!keyLost) {
                violations.add(new HistoryChecker.Violation(conflict.at(),
                        "Q1 a quorum granted a lock within another owner's validity: " + conflict.what()));
            }
        }
    }
}
