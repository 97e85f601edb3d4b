package dev.leasehold.explorer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.campaign.FencedStore;
import dev.leasehold.campaign.History;

/**
 * What callers do in a run, each operation handed to a {@link Client} (blocking ones block it, as they would
 * block a caller), and what the checker needs recorded of it: sections (grant to close, with the fenced store's
 * verdict), waits with their deadlines, losses, failures. Bookkeeping is synchronized on this object: the
 * explorer's thread (asynchronous results) and a client may record at once.
 */
final class Operations {

    /** An asynchronous wait in progress. */
    record Pending(Client.Instance instance, String key, CompletableFuture<Optional<LockHandle>> future, long start,
            long deadline) {
    }

    private final History history;

    private final FencedStore store = new FencedStore();

    private final SimWorld world;

    private final Random random;

    private final Duration lease;

    final List<Section> open = new ArrayList<>();

    final List<History.Section> ended = new ArrayList<>();

    /** Ended sections' handles, asked at the end whether they were told of a loss. */
    final List<LockHandle> endedHandles = new ArrayList<>();

    final List<Pending> pending = new ArrayList<>();

    /** Blocking waits in progress (recorded as deadlines at the end if they never returned). */
    final List<History.Deadline> blockingWaits = new ArrayList<>();

    Operations(History history, SimWorld world, Random random, Duration lease) {
        this.history = history;
        this.world = world;
        this.random = random;
        this.lease = lease;
    }

    /** Sections a client may close: its own thread-bound ones, and its instance's unbound ones. */
    synchronized List<Section> sections(Client.Instance instance, Client client) {
        return open.stream().filter(section -> section.instance == instance && !section.closing
                && (section.owner == null || section.owner == client)).toList();
    }

    String tryLock(Client client, String key, LockMode asked, Duration wait, Duration leaseTime) {
        String what = client.getName() + " tryLock " + key + mode(asked) + " wait " + wait.toMillis() + " ms" + lease(leaseTime);
        client.hand(what, () -> {
            long start = history.now();
            History.Deadline waiting = new History.Deadline(client.instance.name, key, start, start + wait.toNanos(),
                    Long.MAX_VALUE);
            synchronized (this) {
                blockingWaits.add(waiting);
            }
            mayWait(client.instance, wait);
            // this thread holding the key already: a re-entry (granted only while its holding is held)
            Section outer = outerSection(client, key);
            boolean heldBefore = outer == null || outer.handle.isHeld();
            // a re-entry asks its holding's mode (a reader asking to write would be refused: an upgrade deadlocks)
            LockMode mode = outer != null ? outer.mode : asked;
            try {
                Optional<LockHandle> handle = client.instance.engine.tryLock(key, mode, wait, leaseTime);
                waitEnded(waiting, handle.isPresent() ? "granted" : wait.isZero() ? "refused" : "timed-out");
                handle.ifPresent(granted -> {
                    Section section = granted(client.instance, key, mode, granted, outer != null,
                            outer != null ? "re-entry" : "tryLock", start, heldBefore, client);
                    section.fixedLease = outer != null ? outer.fixedLease : leaseTime != null; // its holding's lease
                    section.holdFrom = outer != null ? outer.holdFrom : section.holdFrom;
                });
            }
            catch (RuntimeException ex) {
                waitEnded(waiting, "failed");
                failed("tryLock", client.instance, key, ex);
            }
        });
        return what;
    }

    /** The instance's first call that may wait: its subscription connection may open from here (FreeKeyWatch). */
    private void mayWait(Client.Instance instance, Duration wait) {
        if (!wait.isZero() && instance.firstWaitAt == Long.MIN_VALUE) {
            instance.firstWaitAt = world.now();
        }
    }

    private synchronized void waitEnded(History.Deadline waiting, String outcome) {
        blockingWaits.remove(waiting);
        history.deadline(new History.Deadline(waiting.instance(), waiting.key(), waiting.start(), waiting.deadline(),
                history.now()));
        history.waited(waiting.instance(), waiting.key(), waiting.start(), outcome);
    }

    String tryLockAsync(Client client, String key, LockMode mode, Duration wait, Duration leaseTime) {
        String what = client.getName() + " tryLockAsync " + key + mode(mode) + " wait " + wait.toMillis() + " ms" + lease(leaseTime);
        client.hand(what, () -> {
            long start = history.now();
            mayWait(client.instance, wait);
            CompletableFuture<Optional<LockHandle>> future = client.instance.engine
                .tryLockAsync(key, mode, wait, leaseTime).toCompletableFuture();
            Pending waiting = new Pending(client.instance, key, future, start, start + wait.toNanos());
            synchronized (this) {
                pending.add(waiting);
            }
            future.whenComplete((handle, error) -> {
                synchronized (this) {
                    pending.remove(waiting);
                    history.deadline(new History.Deadline(client.instance.name, key, start, waiting.deadline, history.now()));
                }
                if (error != null) {
                    Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                    history.waited(client.instance.name, key, start, "failed");
                    if (!(cause instanceof CancellationException)) {
                        failed("tryLockAsync", client.instance, key, cause);
                    }
                    return;
                }
                history.waited(client.instance.name, key, start, handle.isPresent() ? "granted"
                        : wait.isZero() ? "refused" : "timed-out");
                handle.ifPresent(granted -> granted(client.instance, key, mode, granted, false, "tryLockAsync", start, true, null)
                    .fixedLease = leaseTime != null);
            });
        });
        return what;
    }

    private synchronized Section outerSection(Client client, String key) {
        return open.stream().filter(section -> section.owner == client && section.key.equals(key) && !section.closing)
            .findFirst().orElse(null);
    }

    String reenter(Client client, Section outer) {
        String what = client.getName() + " re-enter " + outer;
        client.hand(what, () -> {
            boolean heldBefore = outer.handle.isHeld();
            long start = history.now();
            try {
                Optional<LockHandle> handle = client.instance.engine.tryLock(outer.key, outer.mode, Duration.ZERO, null);
                handle.ifPresent(granted -> granted(client.instance, outer.key, outer.mode, granted, true, "re-entry", start, heldBefore,
                        client).holdFrom = outer.holdFrom);
            }
            catch (RuntimeException ex) {
                failed("re-entry", client.instance, outer.key, ex);
            }
        });
        return what;
    }

    String close(Client client, Section section, boolean async) {
        String what = client.getName() + (async ? " closeAsync " : " close ") + section;
        synchronized (this) {
            section.closing = true;
        }
        client.hand(what, () -> {
            end(section, history.now(), false);
            try {
                if (async) {
                    section.handle.closeAsync();
                }
                else {
                    section.handle.close();
                }
            }
            catch (RuntimeException ex) {
                failed("close", client.instance, section.key, ex);
            }
        });
        return what;
    }

    String holdAtLeast(Client client, Section section) {
        Duration hold = Duration.ofMillis(50 + random.nextInt(950)); // at most 1 s: the leftovers check waits that long
        String what = client.getName() + " holdAtLeast " + hold.toMillis() + " ms " + section;
        client.hand(what, () -> {
            long before;
            synchronized (this) {
                before = section.holdNanos;
                section.holdNanos = Math.max(section.holdNanos, hold.toNanos());
            }
            try {
                client.instance.engine.holdAtLeast(section.handle, hold);
            }
            catch (IllegalArgumentException ex) {
                synchronized (this) {
                    section.holdNanos = before; // longer than the section's fixed lease: refused, nothing held
                }
                world.trace("   holdAtLeast refused: " + ex.getMessage());
            }
        });
        return what;
    }

    String extend(Client client, Section section) {
        Duration to = lease.multipliedBy(1 + random.nextInt(3));
        String what = client.getName() + " extend " + section + " to " + to.toMillis() + " ms";
        client.hand(what, () -> {
            try {
                section.handle.extend(to);
            }
            catch (RuntimeException ex) {
                failed("extend", client.instance, section.key, ex);
            }
        });
        return what;
    }

    /** The engine's close: every section of the instance ends there (it releases them, and its callers know). */
    String closeEngine(Client client) {
        Client.Instance instance = client.instance;
        instance.closing = true;
        instance.closingAt = history.now();
        instance.connection.slow.closing = true;
        String what = client.getName() + " engine close " + instance.name;
        client.hand(what, () -> {
            long at = history.now();
            List<Section> cut;
            synchronized (this) {
                cut = open.stream().filter(section -> section.instance == instance && !section.closing).toList();
                cut.forEach(section -> section.closing = true);
            }
            cut.forEach(section -> end(section, at, true));
            long began = history.now();
            instance.engine.close();
            instance.closeNanos = history.now() - began;
            instance.afterEngineClose.run();
            instance.closedAt = history.now();
            instance.closed = true;
        });
        return what;
    }

    private Section granted(Client.Instance instance, String key, LockMode mode, LockHandle handle, boolean reentry,
            String op, long start, boolean heldBefore, Client owner) {
        long now = history.now();
        // readers do not touch the fenced store (overlapping readers' tokens come in any order; the campaign's too)
        boolean readAccepted = mode == LockMode.READ || store.read(key, handle.fencingToken());
        Section section = new Section(history.nextId(), instance, key, mode, handle, reentry, op, start, now, heldBefore,
                readAccepted, owner);
        synchronized (this) {
            if (instance.closing) {
                // granted as the engine closed: it ends at once
                section.closing = true;
                open.add(section);
                end(section, now, true);
                return section;
            }
            open.add(section);
        }
        world.trace("   granted " + section + (reentry && !heldBefore ? " (its holding said it was not held)" : ""));
        return section;
    }

    private synchronized void end(Section section, long at, boolean byShutdown) {
        open.remove(section);
        History.Verdict verdict = section.shared() ? History.Verdict.NOT_WRITTEN
                : !section.readAccepted ? History.Verdict.READ_REFUSED
                : store.write(section.key, section.token) ? History.Verdict.ACCEPTED : History.Verdict.WRITE_REFUSED;
        // the hold runs from the holding's acquisition (ms granularity: up to 1 ms less)
        long kept = section.holdNanos <= 0 ? 0
                : Math.max(0, section.holdFrom + section.holdNanos - 1_000_000L - section.grantedAt);
        ended.add(new History.Section(section.id, section.instance.name, section.key, section.shared(), section.token,
                section.reentry, section.op, section.callStart, section.grantedAt, Math.max(at, section.grantedAt),
                byShutdown ? 0 : kept, verdict, section.heldBefore, false, byShutdown));
        endedHandles.add(section.handle);
    }

    private void failed(String op, Client.Instance instance, String key, Throwable error) {
        boolean documented = error instanceof LockAcquisitionException;
        history.failure(new History.Failure(op, instance.name, key, error.getClass().getName(),
                String.valueOf(error.getMessage()), history.now(), documented));
        world.trace("   " + op + " on " + key + " threw " + error);
    }

    private static String mode(LockMode mode) {
        return mode == LockMode.EXCLUSIVE ? "" : " " + mode;
    }

    private static String lease(Duration leaseTime) {
        return leaseTime == null ? "" : " lease " + leaseTime.toMillis() + " ms";
    }
}
