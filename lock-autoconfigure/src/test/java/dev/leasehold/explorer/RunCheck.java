package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;

import dev.leasehold.LockHandle;
import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.support.CoarseTimeouts;

/**
 * The end of an {@link Explorer} run: what each instance left behind after {@code close()} (L2: keys held or queued
 * in Redis, schedulers with tasks, starter threads alive), and the run's history, the tokens the server issued and
 * every wait's deadline handed to the campaign's {@link HistoryChecker}.
 */
final class RunCheck {

    private RunCheck() {
    }

    static Explorer.Result check(Explorer run, List<String> stuck) {
        SimWorld world = run.world;
        SimRedis redis = run.redis;
        History history = run.history;
        Operations operations = run.operations;
        RunConfig config = run.config;
        run.watch.look(); // a close() that returned at the last step
        run.queueLiveness.look();
        List<String> leftovers = new ArrayList<>(stuck);
        // a key kept by a holdAtLeast (at most 1 s) is not a leftover; a lease (3 s, renewed at most 1 s ago) still is
        world.advanceBy(1_001_000_000L);
        for (Client.Instance instance : run.instances) {
            if (!instance.closed) {
                leftovers.add(instance.name + "'s close() did not return");
            }
            // per node in a quorum run: what its connection to that node left there
            for (SimConnection wire : instance.wires) {
                for (String key : run.keys) {
                    leftovers(instance, wire, key, leftovers);
                }
            }
            for (VirtualScheduler lane : instance.lanes) {
                if (!lane.isShutdown() || lane.pending() > 0) {
                    leftovers.add(instance.name + "'s " + lane.name + " still has " + lane.pending() + " tasks after close()");
                }
            }
        }
        for (SimRedis server : run.quorum != null ? run.quorum.nodes : List.of(redis)) {
            server.failures.forEach(failure -> leftovers.add("the simulated Redis failed (a mistake of the simulation): "
                    + failure));
            server.extendedAfterRelease.forEach(renewal -> leftovers.add("a renewal extended a lease after its release ran"
                    + " (the key kept a whole lease for nobody): " + renewal));
        }
        Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().startsWith("leasehold-"))
            .forEach(thread -> leftovers.add("thread " + thread.getName() + " alive after close()"));
        synchronized (operations) {
            operations.pending.forEach(waiting -> history.deadline(new History.Deadline(waiting.instance().name,
                    waiting.key(), waiting.start(), waiting.deadline(), Long.MAX_VALUE)));
            operations.blockingWaits.forEach(history::deadline);
            for (int i = 0; i < operations.ended.size(); i++) {
                History.Section section = operations.ended.get(i);
                boolean told = section.toldLost() || wasLost(operations.endedHandles.get(i));
                history.section(new History.Section(section.id(), section.instance(), section.key(), section.shared(),
                        section.token(), section.reentry(), section.op(), section.callStart(), section.grantedAt(),
                        section.endAt(), section.holdNanos(), section.verdict(), section.heldBefore(), false, told));
            }
        }
        // a quorum's tokens are its verdicts' (the maximum over a majority), not one node's
        List<SimRedis.Issued> issued = run.quorum != null ? run.quorum.issued : redis.issued;
        issued.forEach(block -> history.issued(new History.Issued(block.key(), block.first(), block.last(),
                block.atNanos(), block.sinceNanos())));
        // a call may end one Redis timeout after its deadline (a reply it waits for), plus the coarse tick, plus late timers
        long lateBound = config.redisTimeout().toNanos() + 2 * CoarseTimeouts.TICK_MILLIS * 1_000_000L + 2 * Explorer.TIMER_SLACK_NANOS
                + 1_000_000L;
        // a key may stand free inside a wait for up to a queue waiter's refresh (1 s) and a grant's claim; not more
        HistoryChecker.Findings findings = new HistoryChecker(2500).lateBound(lateBound)
            .check(history, leftovers);
        List<HistoryChecker.Violation> violations = new ArrayList<>(findings.violations());
        ToldChecks.check(run, violations);
        FailoverChecks.check(run, violations);
        if (run.quorum != null) {
            run.quorum.validity.check(history.faults(), violations);
        }
        if (run.cluster != null) {
            run.cluster.check(violations);
        }
        violations.addAll(run.watch.violations);
        violations.addAll(run.queueLiveness.violations);
        return new Explorer.Result(run.seed, violations, world.trace, history.sections(), run.steps,
                world.elapsed() / 1_000_000);
    }

    /** What {@code instance} left on the server at the end of {@code wire} (L2 leftovers). */
    private static void leftovers(Client.Instance instance, SimConnection wire, String key, List<String> leftovers) {
        SimRedis redis = wire.redis;
        SimWorld world = redis.world;
        String where = instance.wires.size() > 1 ? " on " + wire.name.substring(wire.name.indexOf('/') + 1) : "";
        LockKeys names = LockKeys.of("lock:", key);
        String value = redis.lockValue(names);
        boolean releaseDropped = value != null && wire.dropped.anyReleaseDropped(value::startsWith);
        // a release a fault dropped leaves the key taken until its lease runs out: the documented limit
        if (value != null && wire.tokens.stream().anyMatch(value::startsWith) && !releaseDropped) {
            leftovers.add(instance.name + " still holds " + key + " in Redis" + where + " after close() (" + value + ")");
        }
        // a reader's lease too (its release dropped: it runs out on its own, as a writer's)
        List<String> readersLeft;
        synchronized (wire) {
            readersLeft = redis.liveReaders(names).stream().filter(wire.tokens::contains)
                .filter(token -> !wire.dropped.anyReleaseDropped(token::equals)).toList();
        }
        readersLeft.forEach(token -> leftovers.add(instance.name + " still holds " + key + " in Redis" + where + " after close() (reader "
                    + world.tokenName(token) + ")"));
        boolean withdrawDropped = wire.dropped.withdrawDropped(key, "|W");
        // an entry whose withdraw a fault dropped stays until it expires (the engine cannot know it was lost),
        // and a release may grant the key to it meanwhile
        if (value != null && value.startsWith("queue-grant:" + instance.engine.instanceId()) && !withdrawDropped) {
            leftovers.add(instance.name + " was granted " + key + " by the queue after close() (" + value + ")");
        }
        redis.queued(names).stream().filter(member -> member.startsWith(instance.engine.instanceId()))
            .filter(member -> !wire.dropped.withdrawDropped(key, member))
            .forEach(member -> leftovers.add(instance.name + " still queues for " + key + where + " after close()"));
    }

    private static boolean wasLost(LockHandle handle) {
        try {
            return handle.wasLost();
        }
        catch (RuntimeException ex) {
            return false;
        }
    }
}
