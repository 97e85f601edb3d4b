package dev.leasehold.engine;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.ReactiveLockService;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.leasehold.engine.server.LockKeys;

/**
 * {@code tryLockAsync} waits without holding a thread, in the same first-come-first-served queue as blocking
 * callers, and leaves nothing behind when its wait runs out or is cancelled.
 */
class AsyncLockingTest extends EveryServerEngineTest {

    private static final int WAITERS = 200;

    @Test
    void manyAsyncWaitersHoldNoThreadAndAreServedInArrivalOrderWithIncreasingTokens() throws Exception {
        DefaultLockEngine holderEngine = fixture.engine(); // another client
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = holderEngine.lock("hot", Duration.ZERO);
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();

        List<Integer> servedInOrder = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < WAITERS; i++) {
                int arrival = i;
                // one caller at a time, so arrival order is the order of the calls
                done.add(callers.submit(() -> engine.tryLockAsync("hot", Duration.ofSeconds(60), null)
                    .toCompletableFuture()
                    .thenAccept(handle -> {
                        LockHandle lock = handle.orElseThrow();
                        servedInOrder.add(arrival);
                        tokens.add(lock.fencingToken());
                        lock.close();
                    })).get(10, TimeUnit.SECONDS));
            }
            Await.until(Duration.ofSeconds(20), "every waiter is queued",
                    () -> engine.waitingCount() == 1 && engine.locallyQueuedCount() == WAITERS - 1);

            int threadsWhileWaiting = ManagementFactory.getThreadMXBean().getThreadCount();
            assertThat(threadsWhileWaiting - threadsBefore).as("threads added while %s waiters wait", WAITERS)
                .isLessThan(20);
            assertThat(threadsInsideTryLock()).as("threads parked in tryLock").isEmpty();
            assertThat(done).noneMatch(CompletableFuture::isDone);

            long releasedAt = System.nanoTime();
            held.close();
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            System.out.printf("[%s] %d async waiters: threads %d before, %d while waiting; all served %d ms after the release%n",
                    kind, WAITERS, threadsBefore, threadsWhileWaiting, (System.nanoTime() - releasedAt) / 1_000_000);
        }
        finally {
            callers.shutdownNow();
        }
        List<Integer> arrivalOrder = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            arrivalOrder.add(i);
        }
        assertThat(servedInOrder).as("served first come first served").isEqualTo(arrivalOrder);
        assertThat(tokens).as("fencing tokens").isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(held.fencingToken());
        Await.until(Duration.ofSeconds(5), "the key is free and nothing is left",
                () -> !engine.isLocked("hot") && engine.localGateCount() == 0 && engine.heldLockCount() == 0);
    }

    @Test
    void aWaitThatRunsOutCompletesEmptyAndALaterReleaseDoesNotGrantToIt() throws Exception {
        DefaultLockEngine holderEngine = fixture.engine();
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = holderEngine.lock("short", Duration.ZERO);
        long started = System.nanoTime();
        Optional<LockHandle> none = engine.tryLockAsync("short", Duration.ofMillis(300), null)
            .toCompletableFuture().get(10, TimeUnit.SECONDS);
        long waitedMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(none).isEmpty();
        assertThat(waitedMillis).isGreaterThanOrEqualTo(290).isLessThan(5000);
        Await.until(Duration.ofSeconds(5), "it left the local queue and its entry in Redis",
                () -> engine.localGateCount() == 0 && engine.waitingCount() == 0 && queueLength("short") == 0);

        held.close();
        assertThat(redis.server().command("EXISTS", "lock:{short}")).as("granted to nobody").isEqualTo("0");
        Optional<LockHandle> next = fixture.engine().tryLock("short", Duration.ZERO, null);
        assertThat(next).isPresent();
        next.get().close();
    }

    @Test
    void cancellingAWaitTakesItOutOfTheQueueAndTheNextWaiterGetsTheLock() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = engine.lock("cancel", Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> cancelled = engine.tryLockAsync("cancel", Duration.ofSeconds(30), null)
            .toCompletableFuture();
        CompletableFuture<Optional<LockHandle>> next = engine.tryLockAsync("cancel", Duration.ofSeconds(30), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "both queue", () -> engine.locallyQueuedCount() == 2);

        assertThat(cancelled.cancel(false)).isTrue();
        Await.until(Duration.ofSeconds(5), "the cancelled one left the queue", () -> engine.locallyQueuedCount() == 1);
        held.close();
        LockHandle handle = next.get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(handle.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(engine.heldLockCount()).isEqualTo(1);
        handle.closeAsync().toCompletableFuture().get(5, TimeUnit.SECONDS);
        Await.until(Duration.ofSeconds(5), "nothing is left held",
                () -> "0".equals(redis.server().command("EXISTS", "lock:{cancel}")) && engine.localGateCount() == 0);
    }

    @Test
    void cancellingTheHeadOfTheQueueInRedisWithdrawsItAndHoldsNothing() throws Exception {
        DefaultLockEngine holderEngine = fixture.engine();
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = holderEngine.lock("head", Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> waiting = engine.tryLockAsync("head", Duration.ofSeconds(30), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "it sleeps until a release", () -> engine.waitingCount() == 1);
        waiting.cancel(false);
        Await.until(Duration.ofSeconds(5), "it stopped waiting and withdrew",
                () -> engine.waitingCount() == 0 && engine.localGateCount() == 0 && queueLength("head") == 0);
        held.close();
        assertThat(redis.server().command("EXISTS", "lock:{head}")).isEqualTo("0");
        assertThat(engine.heldLockCount()).isZero();
    }

    @Test
    void shutdownEndsPendingWaitsWithTheSameErrorAsBlockingOnes() throws Exception {
        DefaultLockEngine holderEngine = fixture.engine();
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = holderEngine.lock("closing", Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> head = engine.tryLockAsync("closing", Duration.ofSeconds(30), null)
            .toCompletableFuture();
        CompletableFuture<Optional<LockHandle>> queued = engine.tryLockAsync("closing", Duration.ofSeconds(30), null)
            .toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "both wait",
                () -> engine.waitingCount() == 1 && engine.locallyQueuedCount() == 1);
        engine.close();
        for (CompletableFuture<Optional<LockHandle>> each : List.of(head, queued)) {
            assertThatThrownBy(() -> each.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LockAcquisitionException.class).hasMessageContaining("shutting down");
        }
        assertThatThrownBy(() -> engine.tryLockAsync("closing", Duration.ZERO, null).toCompletableFuture().join())
            .cause().isInstanceOf(LockAcquisitionException.class).hasMessageContaining("shutting down");
        held.close();
        assertThat(redis.server().command("EXISTS", "lock:{closing}")).isEqualTo("0");
    }

    @Test
    void asyncAndBlockingWaitersOnOneKeyKeepArrivalOrder() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle held = engine.lock("mixed", Duration.ZERO);
        List<String> served = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<CompletableFuture<?>> done = new ArrayList<>();
        ExecutorService blockingCallers = Executors.newCachedThreadPool();
        try {
            for (int i = 0; i < 6; i++) {
                String name = (i % 2 == 0 ? "async-" : "blocking-") + i;
                LockMode mode = i == 4 ? LockMode.WRITE : LockMode.EXCLUSIVE;
                if (i % 2 == 0) {
                    done.add(engine.tryLockAsync("mixed", mode, Duration.ofSeconds(30), null).toCompletableFuture()
                        .thenAccept(handle -> serve(name, handle.orElseThrow(), served, tokens)));
                }
                else {
                    done.add(CompletableFuture.runAsync(() -> serve(name,
                            engine.tryLock("mixed", Duration.ofSeconds(30), Duration.ofSeconds(30)).orElseThrow(), served,
                            tokens), blockingCallers));
                }
                int queued = i + 1;
                Await.until(Duration.ofSeconds(5), name + " queued", () -> engine.locallyQueuedCount() == queued);
            }
            held.close();
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
        finally {
            blockingCallers.shutdownNow();
        }
        assertThat(served).containsExactly("async-0", "blocking-1", "async-2", "blocking-3", "async-4", "blocking-5");
        assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(held.fencingToken());
    }

    @Test
    void anAsyncLockIsBoundToNoThread() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        LockHandle async = engine.tryLockAsync("unbound", Duration.ZERO, null).toCompletableFuture()
            .get(5, TimeUnit.SECONDS).orElseThrow();
        // not re-entrant for the thread that asked for it: it waits like any other owner
        assertThat(engine.tryLock("unbound", Duration.ofMillis(100), null)).isEmpty();
        assertThat(engine.heldLockDetails()).singleElement()
            .satisfies(info -> assertThat(info.ownerThread()).contains("asynchronously"));
        CompletableFuture.runAsync(async::close).get(5, TimeUnit.SECONDS); // closed from another thread
        assertThat(async.isHeld()).isFalse();
        assertThat(engine.tryLock("unbound", Duration.ZERO, null)).isPresent().get().satisfies(LockHandle::close);
    }

    /**
     * Stages complete on the engine's own delivery threads, reused: the {@code CompletableFuture} default async pool
     * they completed on before starts a thread per task on a machine of two CPUs or fewer, and with thousands of
     * threads in the JVM a start took so long that async grants came hundreds of milliseconds late (the scale
     * benchmark's 10,000 waiters). A stage that blocks does not hold up the others; close() ends the threads.
     */
    @Test
    void stagesCompleteOnReusedDeliveryThreadsAndABlockedStageHoldsUpNoOther() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        DefaultLockEngine holder = fixture.engine(); // another client
        java.util.Set<Thread> delivering = java.util.concurrent.ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 20; i++) {
            // each stage is attached while its wait is still on (the key held elsewhere), so the thread that runs it
            // is the one that completes the wait, not this one
            LockHandle held = holder.lock("delivered", Duration.ZERO);
            CompletableFuture<Void> stage = engine.tryLockAsync("delivered", Duration.ofSeconds(5), null).toCompletableFuture()
                .thenAccept(handle -> {
                    delivering.add(Thread.currentThread());
                    handle.orElseThrow().close();
                });
            held.close();
            stage.get(5, TimeUnit.SECONDS);
        }
        assertThat(delivering).as("threads that completed 20 waits one after the other")
            .extracting(Thread::getName).containsOnly("leasehold-deliveries");
        // reused: a thread still on its way back from its last delivery when the next one comes makes one more, so a
        // few, not one per wait (the default async pool on 2 CPUs: 20)
        assertThat(delivering).hasSizeLessThanOrEqualTo(5);

        java.util.concurrent.CountDownLatch unblock = new java.util.concurrent.CountDownLatch(1);
        LockHandle held = holder.lock("blocking-stage", Duration.ZERO);
        CompletableFuture<Void> blocked = engine.tryLockAsync("blocking-stage", Duration.ofSeconds(5), null)
            .toCompletableFuture()
            .thenAccept(handle -> {
                try (LockHandle lock = handle.orElseThrow()) {
                    unblock.await(20, TimeUnit.SECONDS); // a caller's stage that blocks (a JDBC call, a join)
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
        held.close();
        Await.until(Duration.ofSeconds(5), "a delivery thread runs the blocking stage",
                () -> engine.heldLockCount() == 1);
        Optional<LockHandle> next = engine.tryLockAsync("after-the-blocked-one", Duration.ofSeconds(5), null)
            .toCompletableFuture().thenApply(handle -> {
                handle.ifPresent(LockHandle::close);
                return handle;
            }).get(5, TimeUnit.SECONDS);
        assertThat(next).as("a grant delivered while another caller's stage blocks").isPresent();
        assertThat(blocked).isNotDone();
        unblock.countDown();
        blocked.get(5, TimeUnit.SECONDS);

        engine.close();
        assertThat(Thread.getAllStackTraces().keySet()).as("delivery threads alive once close() returned")
            .filteredOn(thread -> delivering.contains(thread) && thread.isAlive()).isEmpty();
    }

    @Test
    void aMonoCancelledBeforeTheGrantLeavesNothingHeld() throws Exception {
        DefaultLockEngine engine = fixture.engine();
        ReactiveLockService reactive = new ReactiveLockService(engine);
        LockHandle held = engine.lock("mono", Duration.ZERO);
        List<LockHandle> received = new CopyOnWriteArrayList<>();
        Disposable subscription = reactive.tryLock("mono", Duration.ofSeconds(30), null).subscribe(received::add);
        Await.until(Duration.ofSeconds(5), "the subscription waits", () -> engine.locallyQueuedCount() == 1);
        subscription.dispose();
        Await.until(Duration.ofSeconds(5), "it left the queue", () -> engine.locallyQueuedCount() == 0);
        held.close();
        Await.until(Duration.ofSeconds(5), "nothing is held",
                () -> "0".equals(redis.server().command("EXISTS", "lock:{mono}")) && engine.heldLockCount() == 0
                        && engine.localGateCount() == 0);
        assertThat(received).isEmpty();

        // withLock: the handle is in the context while the Mono runs, and released after it
        Long token = reactive.withLock("mono", Duration.ofSeconds(5),
                Mono.deferContextual(context -> Mono.just(context.get(LockHandle.class).fencingToken())))
            .block(Duration.ofSeconds(10));
        assertThat(token).isGreaterThan(held.fencingToken());
        Await.until(Duration.ofSeconds(5), "released after the Mono",
                () -> "0".equals(redis.server().command("EXISTS", "lock:{mono}")));
        LockHandle busy = engine.lock("mono", Duration.ZERO);
        assertThatThrownBy(() -> reactive.withLock("mono", Duration.ofMillis(100), Mono.just(1)).block(Duration.ofSeconds(10)))
            .isInstanceOf(LockAcquisitionException.class);
        assertThat(reactive.tryLock("mono", Duration.ZERO, null).blockOptional(Duration.ofSeconds(10))).isEmpty();
        busy.close();
    }

    private static void serve(String name, LockHandle handle, List<String> served, List<Long> tokens) {
        served.add(name);
        tokens.add(handle.fencingToken());
        handle.close();
    }

    /** Threads (anywhere in this JVM) blocked inside a lock call: an asynchronous wait must not make any. */
    private static List<String> threadsInsideTryLock() {
        List<String> inside = new ArrayList<>();
        for (Map.Entry<Thread, StackTraceElement[]> each : Thread.getAllStackTraces().entrySet()) {
            for (StackTraceElement frame : each.getValue()) {
                if (frame.getClassName().startsWith("dev.leasehold.engine.") && frame.getMethodName().startsWith("tryLock")) {
                    inside.add(each.getKey().getName());
                    break;
                }
            }
        }
        return inside;
    }

    private int queueLength(String key) {
        return Integer.parseInt(redis.server().command("ZCARD", LockKeys.of("lock:", key).queue()).trim());
    }
}
