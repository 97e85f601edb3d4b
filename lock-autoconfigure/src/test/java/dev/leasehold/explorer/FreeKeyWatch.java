package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.LockKeys;

/**
 * Free-key stalls, judged on the simulated server's truth after every step of the {@link Explorer} (the history's L1,
 * at 2.5 s, is too coarse for them: such a stall ends at the sleeper's own next look, within a second or so).
 * <ul>
 * <li>L1: once a release or a withdrawal ran on a key and left it free (or granted by the queue and not claimed yet),
 * the instance whose turn it is does not sleep beside it for more than {@link #BOUND_NANOS}. Time counts only while
 * nothing of that instance is on its way: no command or reply, no message it may be delivered, no task of its
 * schedulers due, no caller of it descheduled. Not judged within 2 s of a fault, a dropped command or a lost reply (a
 * failing waiter backs off up to a second), for an instance that is closing, nor where the release came while the
 * instance's subscription connection may still be opening after its first call that may wait (its connect latency).
 * A reply held back on its way to the instance (a liveness run's slow looks) is on its way too.</li>
 * <li>L2: when an instance's {@code close()} returned, Redis queues nothing of it and grants it nothing, unless a step
 * that writes that entry is still on its way or a fault dropped its withdrawal; not judged where {@code close()} took
 * a whole Redis timeout on the virtual clock (its documented bound for a caller thread that does not run).</li>
 * </ul>
 */
final class FreeKeyWatch {

    /** How long the instance whose turn it is may sleep beside a free key (the campaign judges L1 at 250 ms too). */
    static final long BOUND_NANOS = 250_000_000L;

    private static final long FAULT_MARGIN_NANOS = 2_000_000_000L;

    private static final class Stall {

        final Client.Instance instance;

        final long since;

        long lastAt;

        boolean asleep;

        long asleepNanos;

        Stall(Client.Instance instance, long since, long now) {
            this.instance = instance;
            this.since = since;
            this.lastAt = now;
        }
    }

    private final Explorer run;

    private final Map<String, Stall> stalls = new HashMap<>();

    private final Map<String, Long> seenReleases = new HashMap<>();

    private final Set<Client.Instance> closeSeen = new HashSet<>();

    final List<HistoryChecker.Violation> violations = new ArrayList<>();

    FreeKeyWatch(Explorer run) {
        this.run = run;
    }

    /** After a step, once every thread settled (the explorer's thread). */
    void look() {
        long now = run.world.now();
        for (String key : run.keys) {
            lookAt(key, now);
        }
        for (Client.Instance instance : run.instances) {
            if (instance.closed && closeSeen.add(instance)) {
                closeReturned(instance);
            }
        }
    }

    private void lookAt(String key, long now) {
        LockKeys names = LockKeys.of("lock:", key);
        String turn = run.redis.turnOf(names);
        Client.Instance who = run.instances.stream().filter(instance -> instance.engine.instanceId().equals(turn))
            .findFirst().orElse(null);
        Long released = run.redis.releasedAt.get(key);
        boolean releasedNow = released != null && !released.equals(seenReleases.put(key, released));
        Stall stall = stalls.get(key);
        if (who == null || who.closing) {
            stalls.remove(key);
            return;
        }
        if (stall == null || stall.instance != who) {
            if (!releasedNow) {
                stalls.remove(key); // its turn came otherwise (a grant ran out, a lease): the sleeper's own look
                return;
            }
            stall = new Stall(who, released, now);
            stalls.put(key, stall);
        }
        else if (stall.asleep) {
            stall.asleepNanos += now - stall.lastAt;
        }
        stall.lastAt = now;
        if (excused(who, stall.since, now)) {
            stalls.remove(key);
            return;
        }
        if (stall.asleepNanos > BOUND_NANOS) {
            violations.add(new HistoryChecker.Violation(run.history.now(), String.format(Locale.ROOT,
                    "L1 %s slept %.1f ms with nothing on its way while %s stood free for it (its turn since a release or"
                            + " withdrawal at %.1f ms, server truth), no fault near",
                    who.name, stall.asleepNanos / 1e6, key, (stall.since - SimWorld.ORIGIN) / 1e6)));
            stalls.remove(key);
            return;
        }
        stall.asleep = asleep(who);
    }

    /** Nothing of the instance is on its way: it wakes only at a timer of its own. */
    private boolean asleep(Client.Instance instance) {
        SimConnection connection = instance.connection;
        if (connection.hasSent() || connection.hasAnswered() || connection.pubSubReady() || connection.slow.anyDescheduled()
                || connection.replyHeld()) {
            return false;
        }
        for (VirtualScheduler lane : instance.lanes) {
            if (lane.due() != null || !lane.runner.idle()) {
                return false;
            }
        }
        return run.world.deliveries.due() == null && run.world.deliveries.runner.idle();
    }

    private boolean excused(Client.Instance who, long since, long now) {
        long toWorld = run.world.now() - run.history.now();
        for (History.Fault fault : run.history.faults()) {
            if (fault.start() + toWorld - now <= 0 && fault.end() + fault.graceNanos() + toWorld + FAULT_MARGIN_NANOS - since >= 0) {
                return true;
            }
        }
        for (Client.Instance instance : run.instances) {
            long lost = instance.connection.lastLossAt;
            if (lost != Long.MIN_VALUE && lost + FAULT_MARGIN_NANOS - since >= 0) {
                return true;
            }
        }
        // the subscription connection may open from the first call that may wait: deaf until it is open
        long firstWait = who.firstWaitAt;
        return firstWait != Long.MIN_VALUE && firstWait - now <= 0
                && firstWait + who.connection.slow.connectNanos + Explorer.TIMER_SLACK_NANOS - since >= 0;
    }

    /** L2 at the moment close() returned: nothing of the instance queued or granted in Redis. */
    private void closeReturned(Client.Instance instance) {
        if (instance.closeNanos >= run.config.redisTimeout().toNanos()) {
            return; // close() waited its bound: what a caller thread that did not run left expires on its own
        }
        String id = instance.engine.instanceId();
        for (String key : run.keys) {
            LockKeys names = LockKeys.of("lock:", key);
            SimConnection connection = instance.connection;
            // an entry a dropped withdraw left is excused (it expires on its own)
            boolean leftWriter = (run.redis.queues(names, id + "|W")
                    || SimQueue.grantAbove(run.redis.lockValue(names), id + "|W") >= 0) && !connection.dropped.withdrawDropped(key, "|W");
            boolean leftReader = run.redis.queues(names, id + "|R") && !connection.dropped.withdrawDropped(key, "|R");
            if ((leftWriter || leftReader) && !connection.queueWriteOnItsWay(key)) {
                violations.add(new HistoryChecker.Violation(run.history.now(), "L2 " + instance.name
                        + "'s close() returned while Redis still queued it for " + key + ", no withdrawal on its way"
                        + (instance.connection.slow.anyDescheduled() ? " (a caller of it still descheduled)" : "")));
            }
        }
    }
}
