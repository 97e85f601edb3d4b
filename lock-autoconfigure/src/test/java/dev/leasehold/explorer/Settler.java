package dev.leasehold.explorer;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits, after each step of the {@link Explorer}, until every caller and every scheduler's thread is blocked or idle
 * (several looks in a row: a thread just woken may not have run yet), so that the next step starts from the same
 * state in every replay; a caller's thread that keeps running with the clock stopped is a busy loop (L4).
 */
final class Settler {

    /** Real time spent settling, over all runs (reported at the end). */
    static long settleNanos;

    private static final boolean DEBUG = Boolean.getBoolean("explorer.debug");

    private final SimWorld world;

    private final List<Client> clients;

    Settler(SimWorld world, List<Client> clients) {
        this.world = world;
        this.clients = clients;
    }

    void settle(int steps) {
        long began = System.nanoTime();
        try {
            settleQuietly();
            if (DEBUG && System.nanoTime() - began > 20_000_000L) {
                System.out.println("SLOW settle " + (System.nanoTime() - began) / 1_000_000 + " ms at step " + steps + ": "
                        + world.trace.get(world.trace.size() - 1));
            }
        }
        finally {
            settleNanos += System.nanoTime() - began;
        }
    }

    private void settleQuietly() {
        long giveUp = System.nanoTime() + 20_000_000_000L;
        int quiet = 0;
        int needed = 3;
        while (quiet < needed) {
            boolean all = true;
            boolean polling = false;
            for (Client client : clients) {
                all &= client.quiet();
                polling |= client.polling();
            }
            for (VirtualScheduler lane : world.lanes) {
                all &= lane.runner.quiet();
                polling |= lane.runner.polling();
            }
            // a thread asleep on a timer of its own looks again within a millisecond: give it three
            needed = polling ? 60 : Wakeups.AVAILABLE ? 3 : 20;
            if (polling && DEBUG) {
                clients.stream().filter(Client::polling).forEach(client -> System.out.println("POLLING " + client.getName()
                        + " " + client.doing + " " + java.util.Arrays.toString(client.getStackTrace())));
            }
            quiet = all ? quiet + 1 : 0;
            if (quiet < needed) {
                Thread.yield();
                LockSupport.parkNanos(50_000);
            }
            if (System.nanoTime() - giveUp > 0) {
                StringBuilder running = new StringBuilder();
                clients.stream().filter(client -> !client.quiet()).forEach(client -> running.append(client.getName())
                    .append(" (").append(client.doing).append(") at ")
                    .append(java.util.Arrays.toString(client.getStackTrace())).append("; "));
                throw new IllegalStateException("L4 a caller's thread kept running for 20 s with the clock stopped: " + running);
            }
        }
    }
}
