package dev.leasehold.explorer;

import java.util.List;

import dev.leasehold.LockMode;
import dev.leasehold.engine.holding.Holdings;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.server.LockKeys;

/**
 * Steps aimed at the windows of readers' ends (wave 10's RD1 and RD2), offered only while one is open and picked by
 * the seed like any other:
 * <ul>
 * <li>the server's clock steps past a held read lease while a writer is queued for the key (at most once a run): the
 * lease ends in Redis before its holder's estimate says, as it does where clocks jump;</li>
 * <li>a queued waiter stops while such an ended read lease is still listed and nothing holds the key: its withdrawal
 * wakes the queue's head, a writer, beside the listed reader (RD2's window);</li>
 * <li>the close of a read lock its engine still holds whose lease Redis no longer keeps (its key lost, or ended): the
 * release must answer "not held" and its holder be told (RD1 and RD2).</li>
 * </ul>
 * Each is a fault or an operation the explorer makes anyway; only its timing is aimed.
 */
final class ReaderAims {

    private final Explorer run;

    private boolean clockStepped;

    ReaderAims(Explorer run) {
        this.run = run;
    }

    void add(List<Explorer.Choice> choices, double faults, Runnable started) {
        Operations operations = run.operations;
        long serverMs = run.redis.serverMillis();
        synchronized (operations) {
            for (Section section : operations.open) {
                HeldLock lock = Holdings.lockOf(section.handle);
                if (section.mode != LockMode.READ || section.closing || lock == null
                        || lock.state() != HeldLock.State.HELD) {
                    continue;
                }
                LockKeys names = LockKeys.of("lock:", section.key);
                Long leaseEnd = run.redis.readLeaseEnd(names, lock.token);
                boolean writerQueued = run.redis.queued(names).stream().anyMatch(member -> member.endsWith("|W"));
                if (faults > 0 && !clockStepped && writerQueued && leaseEnd != null && leaseEnd > serverMs) {
                    long step = leaseEnd - serverMs + 1 + run.random.nextInt(50);
                    choices.add(new Explorer.Choice(0.5, null, () -> {
                        run.world.trace("aim: the server's clock steps past a read lease, a writer queued");
                        clockStepped = true;
                        run.nemesis.stepClock(step);
                    }));
                }
                if (faults > 0 && writerQueued && leaseEnd != null && leaseEnd <= serverMs
                        && run.redis.lockValue(names) == null && run.redis.liveReaders(names).isEmpty()) {
                    stopAWaiter(choices, section.key);
                }
            }
        }
        for (Client client : run.clients) {
            if (!client.idle() || client.instance.closing) {
                continue;
            }
            for (Section section : operations.sections(client.instance, client)) {
                HeldLock lock = Holdings.lockOf(section.handle);
                if (section.mode != LockMode.READ || lock == null || lock.state() != HeldLock.State.HELD) {
                    continue;
                }
                Long leaseEnd = run.redis.readLeaseEnd(LockKeys.of("lock:", section.key), lock.token);
                if (leaseEnd == null || leaseEnd <= serverMs) {
                    choices.add(new Explorer.Choice(2, null, () -> {
                        run.world.trace("aim: close a read lock whose lease Redis no longer keeps");
                        started.run();
                        operations.close(client, section, run.random.nextBoolean());
                    }));
                    return;
                }
            }
        }
    }

    /** A waiter for the key stops (an interrupt, or a cancel of an asynchronous one): it withdraws its entry. */
    private void stopAWaiter(List<Explorer.Choice> choices, String key) {
        for (Client client : run.clients) {
            String doing = client.doing;
            if (!client.idle() && !client.interruptAimed() && doing.contains(" tryLock " + key + " ")) {
                choices.add(new Explorer.Choice(3, null, () -> {
                    run.world.trace("aim: a waiter stops beside an ended read lease; interrupt " + client.getName()
                            + " (" + doing + ")");
                    client.interruptNow();
                }));
                return;
            }
        }
        for (Operations.Pending waiting : run.operations.pending) {
            if (waiting.key().equals(key)) {
                choices.add(new Explorer.Choice(3, null, () -> {
                    run.world.trace("aim: a waiter stops beside an ended read lease; cancel " + waiting.instance().name
                            + "'s tryLockAsync " + key);
                    waiting.future().cancel(false);
                }));
                return;
            }
        }
    }
}
