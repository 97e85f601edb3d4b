package dev.leasehold.explorer;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What an instance's commands that a fault dropped before they reached Redis leave behind, which the engine cannot
 * know of (the documented limits the leftover checks excuse): a queue entry whose withdraw was dropped stays until it
 * expires (the fair queue's entry timeout), a key whose release was dropped until its lease runs out. Thread-safe.
 */
final class DroppedWrites {

    /**
     * Queue entries ('key|W', 'key|R') whose last write was a withdraw that was dropped. A later try rewrites only its
     * own mode's entry; a withdraw, both.
     */
    private final Set<String> withdrawn = new HashSet<>();

    /** Owner tokens whose release was dropped (the watchdog no longer renews their lease). */
    private final Set<String> released = new HashSet<>();

    /**
     * A step that writes the key's queue entries ran or was dropped: a withdraw ({@code withdraw}), or a try that joins
     * the queue with its entry ('|W' or '|R').
     */
    synchronized void queueWrite(String queueKey, boolean withdraw, String entry, boolean dropped) {
        if (withdraw) {
            for (String mode : new String[] { "|W", "|R" }) {
                if (dropped) {
                    withdrawn.add(queueKey + mode);
                }
                else {
                    withdrawn.remove(queueKey + mode);
                }
            }
        }
        else if (!dropped) {
            withdrawn.remove(queueKey + entry);
        }
    }

    synchronized void releaseDropped(String token) {
        released.add(token);
    }

    /** Whether a dropped withdraw left the entry of {@code member}'s mode ('|W' or '|R') for the key. */
    synchronized boolean withdrawDropped(String key, String member) {
        return withdrawn.contains(key + member.substring(member.length() - 2));
    }

    synchronized boolean anyReleaseDropped(Predicate<String> token) {
        return released.stream().anyMatch(token);
    }
}
