package dev.leasehold.explorer;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.Phase;

/**
 * Steps aimed at the narrow windows where defects fixed before lived (docs/testing-leasehold.md, "Teeth"), offered
 * only while such a window is open, and picked by the seed like any other step (so a run still replays): a re-entry
 * once a lease ran out locally and before the watchdog judged it, the clock stopped just past a lease's local end; a
 * close right after a renewal was sent (inside a {@code holdAtLeast}, or by a holder that may linger); a lock key
 * lost, and a thread of the instance coming back, while a release lingers; a lock key lost while a hand-off is ahead;
 * the waiter taking over stopped while its token reservation is on its way. Each is an operation or a fault the
 * explorer makes anyway; only its timing is aimed.
 */
final class Aims {

    private final Explorer run;

    private final Random random;

    Aims(Explorer run, Random random) {
        this.run = run;
        this.random = random;
    }

    /** Aimed operations and faults ({@code faults}: this run's fault weight; no aimed fault in a run without faults). */
    void add(List<Explorer.Choice> choices, double faults, Runnable started) {
        Operations operations = run.operations;
        for (Client client : run.clients) {
            if (!client.idle() || client.instance.closing) {
                continue;
            }
            for (Section section : operations.sections(client.instance, client)) {
                HeldLock lock = Holdings.lockOf(section.handle);
                if (lock == null || lock.state() != HeldLock.State.HELD) {
                    continue;
                }
                if (section.owner == client && !section.handle.isHeld()) {
                    // D5: the lease ran out by the local estimate, the watchdog has not judged it yet
                    choices.add(new Explorer.Choice(4, null, aimed("aim: re-enter after the lease ran out locally", () -> {
                        started.run();
                        operations.reenter(client, section);
                    })));
                }
                if (lock.watched() && lock.renewalSentAtNanos() == 0 && section.holdNanos == 0) {
                    choices.add(new Explorer.Choice(0.1, null, aimed("aim: hold a fresh lock at least a while", () -> {
                        started.run();
                        operations.holdAtLeast(client, section);
                    })));
                }
                if (client.instance.connection.renewalFirst()) {
                    // issue 31 item 6 (inside its hold) and item 2 (a linger ahead): the renewal is still on its way
                    choices.add(new Explorer.Choice(lock.holdLeftMillis() > 0 ? 4 : section.owner == client ? 0.3 : 0, null,
                            aimed("aim: close right after a renewal was sent", () -> {
                                started.run();
                                operations.close(client, section, section.owner == null && random.nextBoolean());
                            })));
                }
            }
        }
        for (Client client : run.clients) {
            if (LockSupport.getBlocker(client) instanceof KeyLine line && line.phase() == Phase.LINGERING) {
                // issue 31 item 2: a renewal refused while the release lingers, and a thread of the turn coming back
                choices.add(new Explorer.Choice(faults > 0 ? 1.5 : 0, null,
                        aimed("aim: lose the key while a release lingers", () -> run.nemesis.loseKey(line.key()))));
                for (Client other : run.clients) {
                    if (other.instance == client.instance && other.idle() && !other.instance.closing) {
                        choices.add(new Explorer.Choice(0.5, null, aimed("aim: come back while a release lingers", () -> {
                            started.run();
                            operations.tryLock(other, line.key(), Duration.ofMillis(300), null);
                        })));
                    }
                }
            }
        }
        if (faults > 0) {
            handOffAhead(choices);
        }
        for (Client.Instance instance : run.instances) {
            String reserving = instance.connection.reservationOnItsWay();
            if (reserving == null || instance.closing) {
                continue;
            }
            // issue 31 item 3: the waiter taking the lock over stops before the reservation's answer comes
            synchronized (operations) {
                for (Operations.Pending waiting : operations.pending) {
                    if (waiting.instance() == instance && waiting.key().equals(reserving)) {
                        choices.add(new Explorer.Choice(1.5, null, aimed("aim: cancel while a reservation is on its way", () -> {
                            run.world.trace("cancel " + waiting.instance().name + "'s tryLockAsync " + waiting.key());
                            waiting.future().cancel(false);
                        })));
                    }
                }
            }
            for (Client client : run.clients) {
                String doing = client.doing;
                if (client.instance == instance && !client.idle() && !client.interruptAimed()
                        && doing.contains(" tryLock " + reserving + " ")) {
                    choices.add(new Explorer.Choice(1, null, aimed("aim: interrupt while a reservation is on its way", () -> {
                        run.world.trace("interrupt " + client.getName() + " (" + doing + ")");
                        client.interruptNow();
                    })));
                }
            }
        }
    }

    /**
     * Issue 31 item 3: the key lost while a lock is held and a waiter of its instance waits for it (a hand-off ahead,
     * whose token reservation will find the key gone).
     */
    private void handOffAhead(List<Explorer.Choice> choices) {
        Operations operations = run.operations;
        synchronized (operations) {
            for (Section section : operations.open) {
                boolean waiterAhead = operations.pending.stream()
                    .anyMatch(waiting -> waiting.instance() == section.instance && waiting.key().equals(section.key))
                        || run.clients.stream().anyMatch(client -> client.instance == section.instance
                                && client.doing.contains(" tryLock " + section.key + " "));
                if (waiterAhead && !section.closing) {
                    choices.add(new Explorer.Choice(0.05, null, aimed("aim: lose the key while a hand-off is ahead",
                            () -> run.nemesis.loseKey(section.key))));
                    return;
                }
            }
        }
    }

    private Runnable aimed(String what, Runnable action) {
        return () -> {
            run.world.trace(what);
            action.run();
        };
    }

    /**
     * With no task due: the clock stops just past the local end of a held lock's lease, if that comes before the next
     * timer (the watchdog judges a lease only at its next tick: D5's window).
     */
    void clock(List<Explorer.Choice> choices, long nextTimer, double weight) {
        long now = run.world.now();
        synchronized (run.operations) {
            for (Section section : run.operations.open) {
                HeldLock lock = Holdings.lockOf(section.handle);
                if (lock == null || lock.state() != HeldLock.State.HELD || !lock.watched()) {
                    continue;
                }
                long end = lock.leaseEndsAtNanos();
                if (end - now > 0 && nextTimer - end > 1) {
                    long to = end + 1 + (long) (random.nextDouble() * Math.min(nextTimer - end - 1, 5_000_000L));
                    choices.add(new Explorer.Choice(weight * 0.5, null, () -> {
                        run.world.advanceTo(to);
                        run.world.trace("clock to just past a lease's local end");
                    }));
                    return;
                }
            }
        }
    }
}
