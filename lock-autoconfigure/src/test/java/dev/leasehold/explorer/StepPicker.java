package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One step of an {@link Explorer} run: lists what may happen next (a scheduler's due task, the next command of a
 * connection, the next reply, the next message, a caller's next operation, an interrupt, a cancel, an aimed step, a
 * fault, the clock moving, never past a due timer) and picks one with the run's seeded random source, then lets the
 * step's threads settle. Only the explorer's thread calls it.
 */
final class StepPicker {

    private final Explorer run;

    private final Random random;

    StepPicker(Explorer run) {
        this.run = run;
        this.random = run.random;
    }

    /** Marks the refused renewals each instance's watchdog is done reading (see {@link ToldChecks}). */
    private void refusalsRead() {
        for (Client.Instance instance : run.instances) {
            if (instance.closing) {
                continue;
            }
            List<VirtualScheduler> watchdog = instance.lanes.stream()
                .filter(lane -> lane.name.startsWith("leasehold-watchdog")).toList();
            instance.said.read(refused -> !watchdog.isEmpty() && watchdog.stream()
                .allMatch(lane -> !lane.isShutdown() && lane.runner.idle() && lane.nextAt() - refused.at() > 0), run.world.now());
        }
    }

    /** One step, from a settled state to a settled state (see {@link #settledTick}). */
    void step(boolean faultsAllowed) {
        refusalsRead();
        run.aims.observe();
        run.watch.look();
        run.queueLiveness.look();
        List<Explorer.Choice> choices = new ArrayList<>();
        for (VirtualScheduler lane : run.world.lanes) {
            if (lane.due() != null) {
                choices.add(new Explorer.Choice(10, "", lane::runHead)); // traced by the lane's thread as it takes it
            }
        }
        double faults = faultsAllowed ? run.faultWeight : 0;
        for (SimConnection connection : run.instances.stream().flatMap(instance -> instance.wires.stream()).toList()) {
            if (connection.slow.anyDescheduled()) {
                choices.add(new Explorer.Choice(8, null, connection.slow::resume));
            }
            if (run.world.now() - connection.pausedUntil < 0) {
                continue; // the connection is cut off for now: nothing goes through it
            }
            if (connection.hasSent()) {
                // a renewal at the head waits longer: what callers send meanwhile may reach Redis first (in a hand-off
                // run longer still: a close, a linger and a lost key may come before Redis refuses it)
                choices.add(new Explorer.Choice(connection.renewalFirst() ? run.config.handOffs() ? 0.5 : 2 : 8, null,
                        () -> connection.runNext(false)));
                if (connection.renewalAhead()) {
                    choices.add(new Explorer.Choice(2, null, connection::runPastRenewal));
                }
                choices.add(new Explorer.Choice(0.2 * faults, null, () -> connection.runNext(true)));
            }
            if (connection.hasAnswered()) {
                choices.add(new Explorer.Choice(8, null, () -> connection.answerNext(false)));
                choices.add(new Explorer.Choice(0.2 * faults, null, () -> connection.answerNext(true)));
            }
            if (connection.pubSubReady()) {
                choices.add(new Explorer.Choice(6, null, () -> connection.pubSubNext(random.nextBoolean())));
            }
        }
        if (faultsAllowed && run.operationsLeft > 0) {
            for (Client client : run.clients) {
                if (client.idle() && !client.instance.closing) {
                    choices.add(new Explorer.Choice(run.operationWeight, null, () -> {
                        run.operationsLeft--;
                        if (random.nextInt(60) == 0 && run.instances.stream().filter(each -> !each.closing).count() > 1) {
                            run.operations.closeEngine(client);
                        }
                        else {
                            run.mix.start(client);
                        }
                    }));
                }
            }
        }
        if (faultsAllowed) {
            // waits stopped at random (RunConfig#stops)
            double stops = run.config.stops();
            for (Client client : run.clients) {
                String doing = client.doing;
                if (!client.idle() && !client.interruptAimed() && !client.instance.connection.slow.descheduled(client)
                        && (doing.contains(" tryLock ") || doing.contains(" re-enter "))) {
                    choices.add(new Explorer.Choice(stops, null, () -> {
                        run.world.trace("interrupt " + client.getName() + " (" + doing + ")");
                        client.interruptNow();
                    }));
                }
            }
            synchronized (run.operations) {
                for (Operations.Pending waiting : run.operations.pending) {
                    choices.add(new Explorer.Choice(stops, null, () -> {
                        run.world.trace("cancel " + waiting.instance().name + "'s tryLockAsync " + waiting.key());
                        waiting.future().cancel(false);
                    }));
                }
            }
            // a hand-off run may aim a few operations past its count (a window opened by its last operations)
            if (run.operationsLeft > (run.config.handOffs() ? -10 : 0)) {
                run.aims.add(choices, faults, () -> run.operationsLeft--);
                run.stallAims.add(choices, () -> run.operationsLeft--);
                run.readerAims.add(choices, faults, () -> run.operationsLeft--);
            }
            choices.add(new Explorer.Choice(0.02 * faults, null, run.nemesis::restart));
            choices.add(new Explorer.Choice(0.05 * faults, null, run.nemesis::cutOff));
            choices.add(new Explorer.Choice(0.05 * faults, null, run.nemesis::loseKey)); // a failover, with a replica
            if (run.quorum != null) {
                run.quorum.aims(choices, faults, run.history, run.instances, run.keys);
            }
            if (run.cluster != null) {
                run.cluster.add(choices); // a slot's migration, key by key (no fault: it goes on in any run)
            }
        }
        if (run.redis.replica != null) {
            run.redis.replica.add(choices, faults, run.keys, run.nemesis);
        }
        boolean anyDue = choices.stream().anyMatch(choice -> choice.what() != null);
        long nextTimer = run.world.lanes.stream().mapToLong(VirtualScheduler::nextAt).min().orElse(Long.MAX_VALUE);
        if (anyDue && run.world.now() - nextTimer < Explorer.TIMER_SLACK_NANOS) {
            // a scheduler's thread may be late (descheduled, a GC pause): up to Explorer.TIMER_SLACK_NANOS after its due time
            long late = nextTimer + Explorer.TIMER_SLACK_NANOS - run.world.now();
            choices.add(new Explorer.Choice(0.1 * run.clockWeight, null, () -> {
                run.world.advanceBy(1 + (long) (random.nextDouble() * late));
                run.world.trace("clock moves while a scheduler is late");
            }));
        }
        if (!anyDue) {
            double weight = choices.stream().anyMatch(choice -> choice.weight() > 0) ? run.clockWeight : 1;
            if (nextTimer != Long.MAX_VALUE) {
                choices.add(new Explorer.Choice(weight, null, () -> {
                    run.world.advanceTo(nextTimer);
                    run.world.trace("clock to the next timer");
                }));
            }
            if (faultsAllowed) {
                run.aims.clock(choices, nextTimer, weight);
            }
            long room = nextTimer == Long.MAX_VALUE ? run.config.lease().toNanos() : nextTimer - run.world.now();
            choices.add(new Explorer.Choice(weight, null, () -> {
                run.world.advanceBy(1 + (long) (random.nextDouble() * Math.min(room, 50_000_000L)));
                run.world.trace("clock moves");
            }));
        }
        double total = choices.stream().mapToDouble(Explorer.Choice::weight).sum();
        double pick = random.nextDouble() * total;
        for (Explorer.Choice choice : choices) {
            pick -= choice.weight();
            if (pick < 0 && choice.weight() > 0) {
                if (choice.what() != null && !choice.what().isEmpty()) {
                    run.world.trace(choice.what());
                }
                choice.action().run();
                break;
            }
        }
        settledTick();
        run.steps++;
    }

    /**
     * Every step at its own instant (the history orders by time): the clock moves a nanosecond once the step's threads
     * are done, never while they run (a task rescheduling itself, a timeout armed, was due a nanosecond later in one
     * run than in another, and the next steps' choices differed: most runs that did not replay across JVMs).
     */
    private void settledTick() {
        run.settler.settle(run.steps);
        if (run.world.advanceBy(1)) {
            run.settler.settle(run.steps); // a linger ended on that nanosecond
        }
    }
}
