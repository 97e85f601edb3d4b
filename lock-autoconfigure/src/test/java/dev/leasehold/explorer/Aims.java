package dev.leasehold.explorer;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.Phase;
import dev.leasehold.engine.server.LockKeys;

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

    /** The callers whose release lingers now (traced as it begins). */
    private final java.util.Map<Client, Long> lingering = new java.util.HashMap<>();

    /** Traces each release that begins to linger (what the aims below wait for). */
    void observe() {
        for (Client client : run.clients) {
            boolean lingers = LockSupport.getBlocker(client) instanceof KeyLine line && line.phase() == Phase.LINGERING;
            if (lingers && lingering.putIfAbsent(client, run.world.now()) == null) {
                run.world.trace("   " + client.getName() + "'s release lingers");
            }
            else if (!lingers) {
                lingering.remove(client);
            }
        }
    }

    /** Aimed operations and faults ({@code faults}: this run's fault weight; no aimed fault in a run without faults). */
    void add(List<Explorer.Choice> choices, double faults, Runnable started) {
        Operations operations = run.operations;
        // a hand-off run (RunConfig#handOffRun) aims at items 2 and 3 harder: it is what it is for
        double shaped = run.config.handOffs() ? 1 : 0;
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
                    choices.add(new Explorer.Choice(lock.holdLeftMillis() > 0 ? 4 : section.owner == client ? 0.3 + 4 * shaped : 0,
                            null, aimed("aim: close right after a renewal was sent", () -> {
                                started.run();
                                operations.close(client, section, section.owner == null && random.nextBoolean());
                            })));
                }
            }
        }
        for (Client client : run.clients) {
            if (LockSupport.getBlocker(client) instanceof KeyLine line && line.phase() == Phase.LINGERING) {
                // issue 31 item 2: a renewal refused while the release lingers, and a thread of the turn coming back
                // (a hand-off run: the key lost while a renewal waits to reach Redis, a thread back once it was refused)
                boolean renewalWaits = client.instance.connection.renewalFirst()
                        && run.redis.lockValue(LockKeys.of("lock:", line.key())) != null;
                choices.add(new Explorer.Choice(faults <= 0 ? 0 : shaped == 0 ? 1.5 : renewalWaits ? 6 : 0.3, null,
                        aimed("aim: lose the key while a release lingers", () -> run.nemesis.loseKey(line.key()))));
                Long since = lingering.get(client);
                boolean refusalRead = shaped > 0 && since != null && client.instance.said.refusalReadSince(line.key(), since);
                for (Client other : run.clients) {
                    if (other.instance == client.instance && other.idle() && !other.instance.closing) {
                        choices.add(new Explorer.Choice(shaped == 0 ? 0.5 : refusalRead ? 10 : 0.3, null,
                                aimed(refusalRead ? "aim: come back once a renewal was refused while a release lingers"
                                        : "aim: come back while a release lingers", () -> {
                            started.run();
                            operations.tryLock(other, line.key(), dev.leasehold.LockMode.EXCLUSIVE, Duration.ofMillis(300), null);
                        })));
                    }
                }
            }
        }
        if (faults > 0) {
            handOffAhead(choices, 0.05 + 0.25 * shaped);
            if (shaped > 0) {
                renewalOnItsWay(choices);
            }
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
                        choices.add(new Explorer.Choice(1.5 + 1.5 * shaped, null, aimed("aim: cancel while a reservation is on its way", () -> {
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
                    choices.add(new Explorer.Choice(1 + 2 * shaped, null, aimed("aim: interrupt while a reservation is on its way", () -> {
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
    private void handOffAhead(List<Explorer.Choice> choices, double weight) {
        Operations operations = run.operations;
        synchronized (operations) {
            for (Section section : operations.open) {
                boolean waiterAhead = operations.pending.stream()
                    .anyMatch(waiting -> waiting.instance() == section.instance && waiting.key().equals(section.key))
                        || run.clients.stream().anyMatch(client -> client.instance == section.instance
                                && client.doing.contains(" tryLock " + section.key + " "));
                // (a hand-off run: only while the key is there to lose)
                if (waiterAhead && !section.closing
                        && (!run.config.handOffs() || run.redis.lockValue(LockKeys.of("lock:", section.key)) != null)) {
                    choices.add(new Explorer.Choice(weight, null, aimed("aim: lose the key while a hand-off is ahead",
                            () -> run.nemesis.loseKey(section.key))));
                    return;
                }
            }
        }
    }

    /**
     * Issue 31 item 2 (hand-off runs): the key lost while a renewal of a lock held by a thread is on its way to Redis
     * (not run yet), so that Redis refuses it; a blocking close by that thread may linger before the refusal comes.
     */
    private void renewalOnItsWay(List<Explorer.Choice> choices) {
        synchronized (run.operations) {
            for (Section section : run.operations.open) {
                if (section.owner != null && !section.closing && section.instance.connection.renewalFirst()
                        && run.redis.lockValue(LockKeys.of("lock:", section.key)) != null) {
                    choices.add(new Explorer.Choice(2, null, aimed("aim: lose the key while a renewal is on its way",
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
