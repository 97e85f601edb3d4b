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
 * <li>a reader releases with a hold left while another reader holds (the readers zset may then outlive every lease it
 * lists: it expires with the longest lease it ever held);</li>
 * <li>the server's clock steps past every listed read lease while a writer is queued for the key (at most once a run),
 * into the time the zset still lists them where it outlives them: leases end in Redis before their holders'
 * estimates say, as they do where clocks jump;</li>
 * <li>a queued waiter stops while ended read leases are still listed and nothing holds the key: its withdrawal wakes
 * the queue's head, a writer, beside the listed readers (RD2's window);</li>
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
        for (String key : run.keys) {
            LockKeys names = LockKeys.of("lock:", key);
            // read without writing (queued() prunes, which a step of the scripts may find otherwise)
            boolean writerQueued = run.instances.stream()
                .anyMatch(instance -> run.redis.queues(names, instance.engine.instanceId() + "|W"));
            Long listedUntil = run.redis.lastReadLeaseEnd(names);
            Long keptUntil = run.redis.readersKeptUntil(names);
            if (faults <= 0 || !writerQueued || listedUntil == null) {
                continue;
            }
            if (!clockStepped && listedUntil >= serverMs) {
                // past every listed read lease: to where the zset still lists them, if it outlives them (a reader
                // released with a hold left, after another's last renewal), else just past them
                long room = keptUntil != null ? keptUntil - listedUntil - 2 : 0;
                long step = listedUntil - serverMs + 1 + (room > 0 ? run.random.nextInt((int) Math.min(room, 50)) : 0);
                choices.add(new Explorer.Choice(0.5, null, () -> {
                    run.world.trace("aim: the server's clock steps past the listed read leases, a writer queued");
                    clockStepped = true;
                    run.nemesis.stepClock(step);
                }));
            }
            if (listedUntil < serverMs && run.redis.lockValue(names) == null) {
                // every listed read lease ended, the zset still there: a withdrawal wakes the writer beside them
                stopAWaiter(choices, key);
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
                LockKeys names = LockKeys.of("lock:", section.key);
                Long leaseEnd = run.redis.readLeaseEnd(names, lock.token);
                String value = run.redis.lockValue(names);
                // (still listed, the key granted to the queue's head: after its claim, when a writer holds it)
                boolean claimComing = leaseEnd != null && value != null && value.startsWith("queue-grant:");
                if ((leaseEnd == null || leaseEnd <= serverMs) && !claimComing) {
                    choices.add(new Explorer.Choice(2, null, () -> {
                        run.world.trace("aim: close a read lock whose lease Redis no longer keeps");
                        started.run();
                        operations.close(client, section, run.random.nextBoolean());
                    }));
                    return;
                }
                if (anotherReader(section)) {
                    // a read lease released with a hold left: the zset may then outlive every lease it lists
                    choices.add(new Explorer.Choice(0.5, null, () -> {
                        run.world.trace("aim: a reader releases with a hold left while another reader holds");
                        started.run();
                        if (section.holdNanos == 0) {
                            operations.holdAtLeast(client, section);
                        }
                        else {
                            operations.close(client, section, false);
                        }
                    }));
                    return;
                }
            }
        }
    }

    private boolean anotherReader(Section section) {
        synchronized (run.operations) {
            return run.operations.open.stream().anyMatch(other -> other != section && other.mode == LockMode.READ
                    && other.key.equals(section.key) && other.handle != section.handle && !other.closing);
        }
    }

    /**
     * A waiter for the key stops (an interrupt, or a cancel of an asynchronous one) and withdraws its instance's entry:
     * one of an instance that queues for the key while another instance's writer queues too (its withdrawal then
     * wakes that writer; a withdrawal of the only writer's entry wakes nobody).
     */
    private void stopAWaiter(List<Explorer.Choice> choices, String key) {
        LockKeys names = LockKeys.of("lock:", key);
        for (Client client : run.clients) {
            String doing = client.doing;
            if (!client.idle() && !client.interruptAimed() && doing.contains(" tryLock " + key + " ")
                    && wakesAnotherWriter(client.instance, names)) {
                choices.add(new Explorer.Choice(3, null, () -> {
                    run.world.trace("aim: a waiter stops beside ended read leases; interrupt " + client.getName()
                            + " (" + doing + ")");
                    client.interruptNow();
                }));
                return;
            }
        }
        synchronized (run.operations) {
            for (Operations.Pending waiting : run.operations.pending) {
                if (waiting.key().equals(key) && wakesAnotherWriter(waiting.instance(), names)) {
                    choices.add(new Explorer.Choice(3, null, () -> {
                        run.world.trace("aim: a waiter stops beside ended read leases; cancel " + waiting.instance().name
                                + "'s tryLockAsync " + key);
                        waiting.future().cancel(false);
                    }));
                    return;
                }
            }
        }
    }

    private boolean wakesAnotherWriter(Client.Instance stopping, LockKeys names) {
        String id = stopping.engine.instanceId();
        return (run.redis.queues(names, id + "|W") || run.redis.queues(names, id + "|R"))
                && run.instances.stream().anyMatch(other -> other != stopping
                        && run.redis.queues(names, other.engine.instanceId() + "|W"));
    }
}
