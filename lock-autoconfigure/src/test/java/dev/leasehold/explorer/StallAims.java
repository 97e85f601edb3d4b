package dev.leasehold.explorer;

import java.util.List;

import dev.leasehold.engine.server.LockKeys;

/**
 * A step aimed at the window of a free-key stall ({@link FreeKeyWatch}), offered only while it is open and picked by
 * the seed like any other: the close of a section taken with a fixed lease once that lease ran out in Redis, while
 * another instance waits for the key (a late release, refused as not owned: the queue's head may be asleep on a lease
 * it saw before). Only its timing is aimed; the explorer closes sections anyway.
 */
final class StallAims {

    private final Explorer run;

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
                    choices.add(new Explorer.Choice(2, null, () -> {
                        run.world.trace("aim: close once the fixed lease ran out in Redis, another instance waiting");
                        started.run();
                        operations.close(client, section, run.random.nextBoolean());
                    }));
                    return;
                }
            }
        }
    }
}
