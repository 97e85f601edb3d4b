package dev.leasehold.campaign;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.campaign.History.Verdict;
import dev.leasehold.engine.DefaultLockEngine;

/**
 * One application thread of an instance: draws operations from its own seeded random source and runs
 * each through the public API as a user's code would, recording what it saw. Cancels and interrupts
 * come from the campaign's scheduler at random offsets, so they land anywhere in the operation.
 */
final class CampaignWorker implements Runnable {

    final CampaignInstance instance;

    private final List<String> keys;

    final Random random;

    final History history;

    final FencedStore store;

    final ScheduledExecutorService scheduler;

    final Executor others;

    private final long deadlineNanos;

    /** The longest fixed lease a worker takes (the watchdog's is {@link EngineCampaign#SETTINGS}'). */
    static final long LONGEST_LEASE_MILLIS = 3000;

    private final RacingOperations racing = new RacingOperations(this);

    CampaignWorker(CampaignInstance instance, List<String> keys, long seed, History history, FencedStore store,
            ScheduledExecutorService scheduler, Executor others, long deadlineNanos) {
        this.instance = instance;
        this.keys = keys;
        this.random = new Random(seed);
        this.history = history;
        this.store = store;
        this.scheduler = scheduler;
        this.others = others;
        this.deadlineNanos = deadlineNanos;
    }

    @Override
    public void run() {
        while (System.nanoTime() < deadlineNanos) {
            // one hot key (two thirds of the operations), so that every instance queues on it locally too
            String key = random.nextInt(3) < 2 ? keys.get(0) : keys.get(random.nextInt(keys.size()));
            int dice = random.nextInt(100);
            DefaultLockEngine engine = instance.engine();
            String op = dice < 12 ? "lock" : dice < 37 ? "tryLock" : dice < 41 ? "closeRacesCancel" : dice < 45 ? "lateReentry"
                    : dice < 65 ? "tryLockAsync" : dice < 75 ? "interrupted" : dice < 83 ? "asLock" : dice < 90 ? "holdAtLeast"
                    : "read";
            history.operation(op);
            long callStart = history.now();
            try {
                switch (op) {
                    case "lock" -> lock(engine, key, callStart);
                    case "tryLock" -> tryLock(engine, key, LockMode.EXCLUSIVE, op, callStart);
                    case "read" -> tryLock(engine, key, LockMode.READ, op, callStart);
                    case "tryLockAsync" -> tryLockAsync(engine, key, callStart);
                    case "interrupted" -> interrupted(engine, key, callStart);
                    case "asLock" -> asLock(engine, key, callStart);
                    case "closeRacesCancel" -> racing.closeRacesCancel(engine, callStart);
                    case "lateReentry" -> racing.lateReentry(engine, key, callStart);
                    default -> holdAtLeast(engine, key, callStart);
                }
            }
            catch (RuntimeException | Error ex) {
                failed(op, key, callStart, ex);
                if (engine.isClosed()) {
                    // the nemesis restarts this instance: go on with the new engine, not spin on the old one
                    EngineCampaign.await(java.time.Duration.ofSeconds(10), () -> instance.engine() != engine);
                }
            }
        }
    }

    private void lock(DefaultLockEngine engine, String key, long callStart) {
        LockHandle handle = engine.lock(key, waitTime(true));
        history.waited(instance.name, key, callStart, "granted");
        section(engine, handle, "lock", key, false, callStart, 0, false, true);
    }

    private void tryLock(DefaultLockEngine engine, String key, LockMode mode, String op, long callStart) {
        Duration wait = waitTime(false);
        Duration lease = leaseTime();
        Optional<LockHandle> handle = engine.tryLock(key, mode, wait, lease);
        if (handle.isEmpty() && wait.toMillis() >= 500) {
            // a long wait that timed out: what Redis says of the key now, for the checker's L1 report
            history.waited(instance.name, key, callStart, "timed-out", inspect(engine, key));
            return;
        }
        waited(key, callStart, wait, handle.isPresent());
        handle.ifPresent(held -> section(engine, held, op, key, mode == LockMode.READ, callStart, 0, lease != null,
                mode != LockMode.READ));
    }

    private void tryLockAsync(DefaultLockEngine engine, String key, long callStart) {
        Duration wait = waitTime(false);
        CompletableFuture<Optional<LockHandle>> outcome = engine
            .tryLockAsync(key, LockMode.EXCLUSIVE, wait, leaseTime()).toCompletableFuture();
        if (random.nextBoolean()) {
            boolean interrupt = random.nextBoolean();
            scheduler.schedule(() -> outcome.cancel(interrupt), random.nextInt(3000), TimeUnit.MICROSECONDS);
        }
        try {
            Optional<LockHandle> handle = outcome.get(wait.toMillis() + 10_000, TimeUnit.MILLISECONDS);
            waited(key, callStart, wait, handle.isPresent());
            // an async grant is not the thread's: no re-entry from here
            handle.ifPresent(held -> section(engine, held, "tryLockAsync", key, false, callStart, 0, false, false));
        }
        catch (CancellationException ex) {
            history.waited(instance.name, key, callStart, "cancelled");
        }
        catch (ExecutionException ex) {
            failed("tryLockAsync", key, callStart, ex.getCause());
        }
        catch (TimeoutException ex) {
            history.failure(new History.Failure("tryLockAsync", instance.name, key, "no outcome",
                    "the future did not complete 10 s after its wait of " + wait.toMillis() + " ms", history.now(), false));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A blocking wait that another thread interrupts at a random moment. */
    private void interrupted(DefaultLockEngine engine, String key, long callStart) {
        Thread self = Thread.currentThread();
        AtomicBoolean armed = new AtomicBoolean(true);
        ScheduledFuture<?> interrupter = scheduler.schedule(() -> {
            if (armed.compareAndSet(true, false)) {
                self.interrupt();
            }
        }, random.nextInt(20_000), TimeUnit.MICROSECONDS);
        Duration wait = Duration.ofMillis(200 + random.nextInt(1500));
        Optional<LockHandle> handle;
        try {
            handle = engine.tryLock(key, LockMode.EXCLUSIVE, wait, null);
        }
        catch (LockAcquisitionException ex) {
            history.waited(instance.name, key, callStart, "interrupted");
            return;
        }
        finally {
            if (!armed.compareAndSet(true, false)) {
                awaitQuietly(interrupter);
            }
            Thread.interrupted();
        }
        waited(key, callStart, wait, handle.isPresent());
        handle.ifPresent(held -> section(engine, held, "interrupted", key, false, callStart, 0, false, true));
    }

    private void asLock(DefaultLockEngine engine, String key, long callStart) {
        Lock view = engine.asLock(key);
        Duration wait = waitTime(false);
        boolean locked;
        try {
            locked = view.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return;
        }
        waited(key, callStart, wait, locked);
        if (!locked) {
            return;
        }
        long grantedAt = history.now();
        // the view has no token of its own: the newest held handle of this key in the engine is this thread's
        // (an older one may linger, lost and not yet closed by its thread)
        long token = engine.heldLocks().stream().filter(handle -> handle.key().equals(key) && handle.isHeld())
            .mapToLong(LockHandle::fencingToken).max().orElse(0);
        pause();
        long endAt = history.now();
        boolean told = false;
        try {
            view.unlock();
        }
        catch (IllegalMonitorStateException ex) {
            told = true; // LockLostException: the view's way of telling
        }
        record(engine, "asLock", key, false, token, false, callStart, grantedAt, endAt, 0, Verdict.NOT_WRITTEN, true, false,
                told);
    }

    private void holdAtLeast(DefaultLockEngine engine, String key, long callStart) {
        Duration wait = waitTime(false);
        long holdMillis = 20 + random.nextInt(300);
        Optional<LockHandle> handle = engine.tryLock(key, LockMode.EXCLUSIVE, wait, Duration.ofMillis(1000),
                Duration.ofMillis(holdMillis));
        waited(key, callStart, wait, handle.isPresent());
        handle.ifPresent(held -> section(engine, held, "holdAtLeast", key, false, callStart,
                TimeUnit.MILLISECONDS.toNanos(holdMillis), true, false));
    }

    /** The critical section: fenced read, work, maybe a re-entry or an extension, fenced write, release. */
    void section(DefaultLockEngine engine, LockHandle handle, String op, String key, boolean shared,
            long callStart, long holdNanos, boolean fixedLease, boolean mayReenter) {
        long grantedAt = history.now();
        long token = handle.fencingToken();
        boolean fenced = !shared && token > 0;
        boolean readAccepted = !fenced || store.read(key, token);
        pause();
        if (mayReenter && random.nextInt(4) == 0) {
            reenter(engine, handle, key);
        }
        if (fixedLease && random.nextInt(5) == 0) {
            long extendCall = history.now();
            try {
                handle.extend(Duration.ofMillis(300 + random.nextInt(1700)));
            }
            catch (RuntimeException ex) {
                failed("extend", key, extendCall, ex);
            }
        }
        boolean heldAtEnd = handle.isHeld();
        Verdict verdict = !fenced ? Verdict.NOT_WRITTEN : !readAccepted ? Verdict.READ_REFUSED
                : store.write(key, token) ? Verdict.ACCEPTED : Verdict.WRITE_REFUSED;
        long endAt = history.now();
        release(handle, key);
        record(engine, op, key, shared, token, false, callStart, grantedAt, endAt, holdNanos, verdict, true, heldAtEnd,
                handle.wasLost());
    }

    void reenter(DefaultLockEngine engine, LockHandle outer, String key) {
        boolean heldBefore = outer.isHeld();
        long callStart = history.now();
        history.operation("re-entry");
        try {
            Optional<LockHandle> inner = engine.tryLock(key, LockMode.EXCLUSIVE, Duration.ZERO, null);
            inner.ifPresent(handle -> {
                long grantedAt = history.now();
                pause();
                boolean heldAtEnd = handle.isHeld();
                long endAt = history.now();
                handle.close();
                record(engine, "re-entry", key, false, handle.fencingToken(), true, callStart, grantedAt, endAt, 0,
                        Verdict.NOT_WRITTEN, heldBefore, heldAtEnd, handle.wasLost());
            });
        }
        catch (RuntimeException ex) {
            failed("re-entry", key, callStart, ex);
        }
    }

    /** close(), closeAsync(), or close() from another thread. */
    void release(LockHandle handle, String key) {
        int how = random.nextInt(10);
        try {
            if (how < 2) {
                handle.closeAsync().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            else if (how < 3) {
                CompletableFuture.runAsync(handle::close, others).get(10, TimeUnit.SECONDS);
            }
            else {
                handle.close();
            }
        }
        catch (ExecutionException ex) {
            failed("close", key, history.now(), ex.getCause());
        }
        catch (TimeoutException ex) {
            history.failure(new History.Failure("close", instance.name, key, "no outcome",
                    "the release did not complete within 10 s", history.now(), false));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (RuntimeException ex) {
            failed("close", key, history.now(), ex);
        }
    }

    void record(DefaultLockEngine engine, String op, String key, boolean shared, long token, boolean reentry,
            long callStart, long grantedAt, long endAt, long holdNanos, Verdict verdict, boolean heldBefore,
            boolean heldAtEnd, boolean told) {
        long closedAt = instance.closedAt(engine);
        boolean cutByShutdown = closedAt >= 0 && closedAt < endAt;
        long end = cutByShutdown ? Math.max(grantedAt, closedAt) : endAt;
        // a shutdown releases what the instance holds: its sections end there, and it knows
        history.section(new History.Section(history.nextId(), instance.name, key, shared, token, reentry, op, callStart,
                grantedAt, end, cutByShutdown ? 0 : holdNanos, verdict, heldBefore, heldAtEnd, told || cutByShutdown));
    }

    private static String inspect(DefaultLockEngine engine, String key) {
        try {
            return engine.inspect(key) + ", waiting here " + engine.waitingCount();
        }
        catch (RuntimeException ex) {
            return "inspect failed: " + ex;
        }
    }

    void waited(String key, long callStart, Duration wait, boolean granted) {
        history.waited(instance.name, key, callStart, granted ? "granted" : wait.isZero() ? "refused" : "timed-out");
    }

    void failed(String op, String key, long callStart, Throwable error) {
        boolean documented = error instanceof LockAcquisitionException
                || (error instanceof CancellationException && op.equals("tryLockAsync"));
        history.failure(new History.Failure(op, instance.name, key, error.getClass().getName(),
                String.valueOf(error.getMessage()), history.now(), documented));
        if (!op.equals("close") && !op.equals("extend")) {
            history.waited(instance.name, key, callStart, "failed");
        }
    }

    /** No wait, a short one, or one longer than a stranded queue would let pass. */
    Duration waitTime(boolean blocking) {
        int dice = random.nextInt(10);
        if (dice < 2 && !blocking) {
            return Duration.ZERO;
        }
        return Duration.ofMillis(dice < 6 ? 1 + random.nextInt(300) : 300 + random.nextInt(2700));
    }

    /** The watchdog, or a fixed lease. */
    Duration leaseTime() {
        return random.nextInt(3) == 0 ? Duration.ofMillis(800 + random.nextInt((int) LONGEST_LEASE_MILLIS - 800)) : null;
    }

    /** The work inside a section: mostly short, now and then longer than a lease. */
    void pause() {
        int dice = random.nextInt(100);
        long micros = dice < 60 ? random.nextInt(2000) : dice < 95 ? random.nextInt(25_000) : 500_000 + random.nextInt(2_000_000);
        java.util.concurrent.locks.LockSupport.parkNanos(micros * 1000);
    }

    private static void awaitQuietly(ScheduledFuture<?> task) {
        try {
            task.get(5, TimeUnit.SECONDS);
        }
        catch (CancellationException | ExecutionException | TimeoutException ex) {
            // it ran or never will
        }
        catch (InterruptedException ex) {
            // the flag is cleared by the caller
        }
    }
}
