package dev.leasehold.campaign;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.campaign.History.Verdict;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.EngineDiagnostics;

/** A worker's operations that make two events land together on purpose, at a random offset. */
final class RacingOperations {

    /** A thread of its own for each task: the shared pools may be busy, and these must run now. */
    private static final java.util.concurrent.Executor OWN_THREAD = task -> new Thread(task, "campaign-racer").start();

    private final CampaignWorker worker;

    RacingOperations(CampaignWorker worker) {
        this.worker = worker;
    }

    /**
     * A holder's release and the cancel of a waiter queued behind it in the same instance, a few microseconds
     * apart either way: the hand-off to that waiter and its giving up land together.
     */
    /** The key only this operation takes: its waiter is then the head of its instance's local queue. */
    static final String RACE_KEY = "race";

    void closeRacesCancel(DefaultLockEngine engine, long firstCallStart) {
        String key = RACE_KEY;
        // a few rounds: the window where the two meet is microseconds wide
        for (int round = 0; round < 5; round++) {
            closeRacesCancelOnce(engine, key, round == 0 ? firstCallStart : worker.history.now());
        }
    }

    private void closeRacesCancelOnce(DefaultLockEngine engine, String key, long callStart) {
        // a watchdog lease: only those are handed on locally
        Optional<LockHandle> held = engine.tryLock(key, LockMode.EXCLUSIVE, worker.waitTime(false), null);
        worker.waited(key, callStart, Duration.ZERO, held.isPresent());
        if (held.isEmpty()) {
            return;
        }
        long grantedAt = worker.history.now();
        long token = held.get().fencingToken();
        boolean readAccepted = worker.store.read(key, token);
        long waiterStart = worker.history.now();
        CompletableFuture<Optional<LockHandle>> waiter = engine
            .tryLockAsync(key, LockMode.EXCLUSIVE, Duration.ofMillis(1000 + worker.random.nextInt(2000)), null).toCompletableFuture();
        EngineCampaign.await(Duration.ofSeconds(1), () -> waiter.isDone() || EngineDiagnostics.locallyQueued(engine) > 0);
        // and behind it a fixed-lease caller, which a hand-off passes over (it must start its own lease in Redis)
        long behindStart = worker.history.now();
        CompletableFuture<Optional<LockHandle>> behind = CompletableFuture.supplyAsync(
                () -> engine.tryLock(key, LockMode.EXCLUSIVE, Duration.ofSeconds(3), Duration.ofMillis(1000)), OWN_THREAD);
        EngineCampaign.await(Duration.ofSeconds(1), () -> behind.isDone() || EngineDiagnostics.locallyQueued(engine) > 1);
        worker.pause();
        boolean heldAtEnd = held.get().isHeld();
        Verdict verdict = !readAccepted ? Verdict.READ_REFUSED : worker.store.write(key, token) ? Verdict.ACCEPTED : Verdict.WRITE_REFUSED;
        long endAt = worker.history.now();
        // the cancel lands from 800 µs before the release to 200 µs after it
        long offsetNanos = (worker.random.nextInt(1000) - 800) * 1000L;
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Void> cancel = CompletableFuture.runAsync(() -> {
            awaitQuietly(go);
            spin(offsetNanos);
            waiter.cancel(false);
        }, OWN_THREAD);
        go.countDown();
        spin(-offsetNanos);
        held.get().close();
        cancel.join();
        worker.record(engine, "closeRacesCancel", key, false, token, false, callStart, grantedAt, endAt, 0, verdict, true,
                heldAtEnd, held.get().wasLost());
        try {
            Optional<LockHandle> next = waiter.get(10, TimeUnit.SECONDS);
            worker.history.waited(worker.instance.name, key, waiterStart, next.isPresent() ? "granted" : "timed-out");
            next.ifPresent(handle -> worker.section(engine, handle, "closeRacesCancel", key, false, waiterStart, 0, false, false));
        }
        catch (CancellationException ex) {
            worker.history.waited(worker.instance.name, key, waiterStart, "cancelled");
        }
        catch (ExecutionException ex) {
            worker.failed("tryLockAsync", key, waiterStart, ex.getCause());
        }
        catch (TimeoutException ex) {
            worker.history.failure(new History.Failure("tryLockAsync", worker.instance.name, key, "no outcome",
                    "the future did not complete within 10 s of its release", worker.history.now(), false));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        try {
            Optional<LockHandle> after = behind.get(10, TimeUnit.SECONDS);
            worker.history.waited(worker.instance.name, key, behindStart, after.isPresent() ? "granted" : "timed-out");
            after.ifPresent(handle -> worker.section(engine, handle, "closeRacesCancel", key, false, behindStart, 0, true, false));
        }
        catch (ExecutionException ex) {
            worker.failed("tryLock", key, behindStart, ex.getCause());
        }
        catch (TimeoutException ex) {
            worker.history.failure(new History.Failure("tryLock", worker.instance.name, key, "no outcome",
                    "a 3 s tryLock did not return within 10 s", worker.history.now(), false));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void spin(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A re-entry around the moment a short fixed lease runs out, as a slow section would make it. */
    void lateReentry(DefaultLockEngine engine, String key, long callStart) {
        long leaseMillis = 200 + worker.random.nextInt(600);
        Optional<LockHandle> held = engine.tryLock(key, LockMode.EXCLUSIVE, worker.waitTime(false), Duration.ofMillis(leaseMillis));
        worker.waited(key, callStart, Duration.ZERO, held.isPresent());
        if (held.isEmpty()) {
            return;
        }
        LockHandle handle = held.get();
        long grantedAt = worker.history.now();
        long token = handle.fencingToken();
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(leaseMillis * (70 + worker.random.nextInt(60)) / 100));
        worker.reenter(engine, handle, key);
        boolean heldAtEnd = handle.isHeld();
        long endAt = worker.history.now();
        worker.release(handle, key);
        worker.record(engine, "lateReentry", key, false, token, false, callStart, grantedAt, endAt, 0, Verdict.NOT_WRITTEN, true,
                heldAtEnd, handle.wasLost());
    }

}
