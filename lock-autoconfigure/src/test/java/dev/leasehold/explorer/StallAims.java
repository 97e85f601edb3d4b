package dev.leasehold.explorer;

import java.time.Duration;
import java.util.List;

import dev.leasehold.engine.server.LockKeys;

/**
 * Steps aimed at the windows of the free-key stalls ({@link FreeKeyWatch}), offered only while one is open and picked
 * by the seed like any other: the close of a section taken with a fixed lease once that lease ran out in Redis, while
 * another instance waits for the key (a late release, refused as not owned: the queue's head may be asleep on a lease
 * it saw before); a close while another instance is queued for the key and its subscription connection is still
 * opening (a release it cannot hear). Only their timing is aimed; the explorer closes sections anyway.
 */
final class StallAims {

    private final Explorer run;

    /** Clients sent to join a holder's turn with a short lease (the holder's close is aimed while they wait). */
    private final java.util.Set<Client> joiners = new java.util.HashSet<>();

    StallAims(Explorer run) {
        this.run = run;
    }

    void add(List<Explorer.Choice> choices, Runnable started) {
        Operations operations = run.operations;
        for (Client client : run.clients) {
            if (!client.idle() || client.instance.closing) {
                continue;
            }
            for (Section section : operations.sections(client.instance, client)) {
                LockKeys names = LockKeys.of("lock:", section.key);
                if (section.fixedLease && run.redis.lockValue(names) == null && run.redis.turnOf(names) != null) {
                    choices.add(aimed("aim: close once the fixed lease ran out in Redis, another instance waiting", client,
                            section, started));
                    return;
                }
                if (section.owner != client && section.grantedAt > run.history.now() - 20_000_000L
                        && othersQueued(client.instance, names) && operations.sections(client.instance, client).stream()
                            .noneMatch(mine -> mine.owner == client && mine.key.equals(section.key))) {
                    // a local successor with a short fixed lease: the hand-off shortens the lease the queue's head
                    // last saw, so it may sleep past its end
                    choices.add(new Explorer.Choice(1, null, () -> {
                        run.world.trace("aim: join a fresh holder's turn with a short fixed lease, another instance queued");
                        started.run();
                        joiners.add(client);
                        operations.tryLock(client, section.key, dev.leasehold.LockMode.EXCLUSIVE, Duration.ofSeconds(2), Duration.ofMillis(100 + run.random.nextInt(300)));
                    }));
                    return;
                }
                if (joiners.stream().anyMatch(joiner -> joiner.instance == client.instance && !joiner.idle()
                        && joiner != client && joiner.doing.contains(" tryLock " + section.key + " "))) {
                    choices.add(aimed("aim: close while a local successor with a short lease waits", client, section,
                            started));
                    return;
                }
                if (deafWaiter(client.instance, names)) {
                    choices.add(aimed("aim: close while a queued instance's subscription connection opens", client, section,
                            started));
                    return;
                }
            }
        }
    }

    private boolean othersQueued(Client.Instance holder, LockKeys names) {
        return run.instances.stream().anyMatch(instance -> instance != holder
                && run.redis.queues(names, instance.engine.instanceId() + "|W"));
    }

    /** Another instance queued for the key while its subscription connection is still opening (it hears no release). */
    private boolean deafWaiter(Client.Instance holder, LockKeys names) {
        for (Client.Instance instance : run.instances) {
            Slowness slow = instance.connection.slow;
            if (instance != holder && !instance.closing && slow.openingSince() != Long.MIN_VALUE && !slow.open()
                    && run.redis.queues(names, instance.engine.instanceId() + "|W")) {
                return true;
            }
        }
        return false;
    }

    private Explorer.Choice aimed(String what, Client client, Section section, Runnable started) {
        return new Explorer.Choice(2, null, () -> {
            run.world.trace(what);
            started.run();
            run.operations.close(client, section, run.random.nextBoolean());
        });
    }
}
