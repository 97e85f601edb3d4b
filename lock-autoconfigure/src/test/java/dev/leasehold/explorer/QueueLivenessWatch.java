package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.LockKeys;

/**
 * F1, a waiting instance keeps its place in the fair queue (server truth, after every step of the {@link Explorer}).
 * In liveness mode (one server) a queue entry whose instance wrote no liveness key within the entry timeout counts as
 * dead: when its turn comes it is dropped ({@link SimQueue#liveHead}) and whoever queued after it is served first,
 * while its waiter wakes late and queues again at the back. So while a caller of an instance still waits for a key
 * (its wait begun, its deadline ahead, not interrupted) and the instance is not closing, its entry must never count
 * as dead. Excused:
 * <ul>
 * <li>a liveness write (a keep-alive, or a try that joins the queue) the instance sent within the entry timeout:
 * it has not reached Redis yet, or a fault dropped it (a slow network, not the engine, let the key lapse);</li>
 * <li>a Redis restart, a cut-off of the instance's connection, or a command or reply of it lost, within the entry
 * timeout and {@link #FAULT_MARGIN_NANOS} before (its waiter's failing tries back off without sleeping, its
 * subscription is made again).</li>
 * </ul>
 * Each instance and key is reported once a run.
 */
final class QueueLivenessWatch {

    /** How long after a fault a waiter may still be backing off or subscribing again (as {@link FreeKeyWatch}). */
    private static final long FAULT_MARGIN_NANOS = 2_000_000_000L;

    private final Explorer run;

    private final Set<String> reported = new HashSet<>();

    final List<HistoryChecker.Violation> violations = new ArrayList<>();

    QueueLivenessWatch(Explorer run) {
        this.run = run;
    }

    /** After a step, once every thread settled (the explorer's thread). */
    void look() {
        long now = run.world.now();
        long historyNow = run.history.now();
        long entryNanos = run.config.fairQueue().entryTimeout().toNanos();
        for (String key : run.keys) {
            LockKeys names = LockKeys.of("lock:", key);
            for (Client.Instance instance : run.instances) {
                // a writer's entry or a reader's: the instance's heartbeat keeps both
                String id = instance.engine.instanceId();
                if (instance.closing
                        || !run.redis.countsAsDead(names, id + "|W") && !run.redis.countsAsDead(names, id + "|R")) {
                    continue;
                }
                History.Deadline waiting = stillWaiting(instance, key, historyNow);
                long sentAt = instance.connection.livenessWriteSentAt;
                if (waiting == null || sentAt != Long.MIN_VALUE && now - sentAt < entryNanos
                        || faultNear(instance, now, historyNow, entryNanos + FAULT_MARGIN_NANOS)
                        || !reported.add(instance.name + "|" + key)) {
                    continue;
                }
                violations.add(new HistoryChecker.Violation(historyNow, String.format(Locale.ROOT,
                        "F1 a waiting instance's queue entry counts as dead: %s's entry for %s has no liveness key"
                                + " (its turn would drop it and serve whoever queued after it) while a caller of %s still"
                                + " waits (since %.1f ms, until %.1f ms); it sent no liveness write for %s (entry timeout"
                                + " %d ms), no fault near",
                        instance.name, key, instance.name, waiting.start() / 1e6, waiting.deadline() / 1e6,
                        sentAt == Long.MIN_VALUE ? "the whole run"
                                : String.format(Locale.ROOT, "%.1f ms", (now - sentAt) / 1e6),
                        entryNanos / 1_000_000)));
            }
        }
    }

    /**
     * A wait of the instance on the key that is still on (begun, deadline ahead, not interrupted), or null: an
     * asynchronous one, or a blocking one whose caller's thread is still in it.
     */
    private History.Deadline stillWaiting(Client.Instance instance, String key, long historyNow) {
        Operations operations = run.operations;
        synchronized (operations) {
            for (Operations.Pending pending : operations.pending) {
                if (pending.instance() == instance && pending.key().equals(key) && pending.start() <= historyNow
                        && pending.deadline() > historyNow) {
                    return new History.Deadline(instance.name, key, pending.start(), pending.deadline(), Long.MAX_VALUE);
                }
            }
            boolean callerIn = run.clients.stream().anyMatch(client -> client.instance == instance && !client.idle()
                    && !client.interruptAimed() && client.doing.contains(" tryLock " + key + " "));
            return !callerIn ? null : operations.blockingWaits.stream()
                .filter(wait -> wait.instance().equals(instance.name) && wait.key().equals(key)
                        && wait.start() <= historyNow && wait.deadline() > historyNow)
                .findFirst().orElse(null);
        }
    }

    /** A restart, a clock step, a cut-off of this instance's connection, or a loss on it, within {@code windowNanos} before now. */
    private boolean faultNear(Client.Instance instance, long now, long historyNow, long windowNanos) {
        long lost = instance.connection.lastLossAt;
        if (lost != Long.MIN_VALUE && now - lost < windowNanos) {
            return true;
        }
        return run.history.faults().stream()
            .filter(fault -> fault.kind().equals("restart-empty") || fault.kind().equals("clock-step")
                    || fault.kind().equals("cut-off") && fault.target().equals(instance.name))
            .anyMatch(fault -> fault.start() <= historyNow && historyNow - fault.end() - fault.graceNanos() < windowNanos);
    }
}
