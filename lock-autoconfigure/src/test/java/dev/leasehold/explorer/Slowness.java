package dev.leasehold.explorer;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Two ways one instance is slow, chosen by the seed (the free-key stalls of docs/testing-leasehold.md, found beside
 * the campaign): its subscription connection takes a while to open, from the first of the engine's
 * {@code prepareSubscriptions()} (its first call that may wait) and its first subscription; and, once its
 * {@code close()} began, a caller's thread that withdraws the instance's queue entry is descheduled right there, before
 * the withdrawal is sent, until the explorer lets it run again (a step of its own, picked like any other).
 */
final class Slowness {

    private final String name;

    private final SimWorld world;

    /** How long the subscription connection takes to open (virtual ns). */
    volatile long connectNanos;

    /** Whether callers are descheduled as they withdraw once the instance's close() began. */
    volatile boolean descheduleAtClose;

    /** Set by the explorer as the instance's close() begins. */
    volatile boolean closing;

    /** When the subscription connection is (or will be) open; Long.MIN_VALUE: not asked to open yet. */
    private long openAt = Long.MIN_VALUE;

    private final Map<Client, CompletableFuture<Void>> descheduled = new LinkedHashMap<>();

    Slowness(String name, SimWorld world) {
        this.name = name;
        this.world = world;
    }

    /** The subscription connection begins to open, if it has not yet. */
    void opening() {
        synchronized (this) {
            if (openAt != Long.MIN_VALUE) {
                return;
            }
            openAt = world.now() + connectNanos;
        }
        world.trace(name + "'s subscription connection opens" + (connectNanos == 0 ? ""
                : String.format(Locale.ROOT, " in %.1f ms", connectNanos / 1e6)));
    }

    /** Whether it is open: messages and subscription changes may be delivered. */
    synchronized boolean open() {
        return openAt != Long.MIN_VALUE && world.now() - openAt >= 0;
    }

    /** Asked to open when (virtual ns), or Long.MIN_VALUE. */
    synchronized long openingSince() {
        return openAt == Long.MIN_VALUE ? Long.MIN_VALUE : openAt - connectNanos;
    }

    /** On the thread that withdraws from {@code key}: a caller's thread, once close() began, may stop here a while. */
    void descheduleAtWithdraw(String key) {
        if (!closing || !descheduleAtClose || !(Thread.currentThread() instanceof Client caller) || caller.instance == null) {
            return;
        }
        CompletableFuture<Void> resume = new CompletableFuture<>();
        synchronized (this) {
            descheduled.put(caller, resume);
        }
        world.trace(caller.getName() + " descheduled as it withdraws from " + key);
        resume.join();
    }

    synchronized boolean descheduled(Client client) {
        return descheduled.containsKey(client);
    }

    synchronized boolean anyDescheduled() {
        return !descheduled.isEmpty();
    }

    /** The caller descheduled first runs again. */
    void resume() {
        Map.Entry<Client, CompletableFuture<Void>> first;
        synchronized (this) {
            Iterator<Map.Entry<Client, CompletableFuture<Void>>> all = descheduled.entrySet().iterator();
            if (!all.hasNext()) {
                return;
            }
            first = all.next();
            all.remove();
        }
        world.trace(first.getKey().getName() + " runs again");
        first.getValue().complete(null);
    }
}
