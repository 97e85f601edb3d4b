package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * One of the engine's single-threaded schedulers on the virtual clock: it has no thread. Its tasks wait in a
 * lane, ordered by due time as a real single-threaded scheduler would run them, and run on the explorer's thread
 * when the explorer picks this lane. Only the methods the engine calls are backed; the rest are the JDK's (unused).
 */
final class VirtualScheduler extends ScheduledThreadPoolExecutor {

    private final SimWorld world;

    final String name;

    private final TreeSet<Task<?>> queue = new TreeSet<>();

    private volatile boolean shutdown;

    /** Threads in {@link #awaitTermination}, woken as it terminates. */
    private final java.util.Set<Thread> awaiting = new java.util.HashSet<>();

    /** The scheduler's own thread: it runs a task when the explorer says (a task may block, as on a real one). */
    final Client runner;

    VirtualScheduler(SimWorld world, ThreadFactory threads) {
        super(1, threads);
        this.world = world;
        this.name = threads.newThread(() -> {
        }).getName(); // an unstarted thread: only its name is used
        this.runner = new Client(null, "explorer-" + name, world);
        runner.start();
        world.lanes.add(this);
    }

    final class Task<V> extends FutureTask<V> implements RunnableScheduledFuture<V> {

        long at;

        final long periodNanos;

        final long seq;

        Task(Callable<V> work, long at, long periodNanos) {
            super(work);
            this.at = at;
            this.periodNanos = periodNanos;
            this.seq = world.nextSeq();
        }

        @Override
        public boolean isPeriodic() {
            return periodNanos > 0;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(at - world.now(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task<?> that = (Task<?>) other;
            return at != that.at ? Long.compare(at, that.at) : Long.compare(seq, that.seq);
        }

        @Override
        public void run() {
            if (!isPeriodic()) {
                super.run();
            }
            else if (runAndReset() && !shutdown) {
                at = world.now() + periodNanos;
                synchronized (VirtualScheduler.this) {
                    queue.add(this);
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterrupt) {
            boolean cancelled = super.cancel(mayInterrupt);
            synchronized (VirtualScheduler.this) {
                queue.remove(this);
            }
            terminating();
            return cancelled;
        }
    }

    private <V> Task<V> add(Callable<V> work, long delayNanos, long periodNanos) {
        if (shutdown) {
            throw new RejectedExecutionException(name + " is shut down");
        }
        Task<V> task = new Task<>(work, world.now() + Math.max(0, delayNanos), periodNanos);
        synchronized (this) {
            queue.add(task);
        }
        return task;
    }

    /** The task this lane runs next if it is due now (and its thread is free), else null. */
    synchronized Task<?> due() {
        if (!runner.idle()) {
            return null; // one thread: the next task waits for the one running (it may be blocked)
        }
        Task<?> head = queue.isEmpty() ? null : queue.first();
        return head != null && head.at - world.now() <= 0 ? head : null;
    }

    /** When its next task is due, or Long.MAX_VALUE when it has none. */
    synchronized long nextAt() {
        return queue.isEmpty() ? Long.MAX_VALUE : queue.first().at;
    }

    /** Runs the head task (due, checked by the caller) on the lane's thread. */
    void runHead() {
        Task<?> head;
        synchronized (this) {
            head = queue.pollFirst();
        }
        if (head != null) {
            runner.hand("task of " + name, head);
        }
        terminating();
    }

    /** Wakes the threads that wait for this scheduler to terminate, once it has. */
    private void terminating() {
        List<Thread> woken;
        synchronized (this) {
            if (!isTerminated() || awaiting.isEmpty()) {
                return;
            }
            woken = new ArrayList<>(awaiting);
        }
        woken.forEach(world.parks::unpark);
    }

    synchronized int pending() {
        return queue.size();
    }

    synchronized boolean hasPeriodic() {
        return queue.stream().anyMatch(Task::isPeriodic);
    }

    @Override
    public void execute(Runnable command) {
        add(Executors.callable(command), 0, 0);
    }

    @Override
    public Future<?> submit(Runnable task) {
        return add(Executors.callable(task), 0, 0);
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        return add(Executors.callable(task, result), 0, 0);
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        return add(task, 0, 0);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(Executors.callable(command), unit.toNanos(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return add(callable, unit.toNanos(delay), 0);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return add(Executors.callable(command), unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(Executors.callable(command), unit.toNanos(initialDelay), unit.toNanos(delay));
    }

    @Override
    public void shutdown() {
        shutdown = true;
        synchronized (this) {
            // as the JDK's: periodic tasks end; delayed ones run unless the policy says otherwise
            queue.removeIf(task -> task.isPeriodic()
                    || (!getExecuteExistingDelayedTasksAfterShutdownPolicy() && task.at - world.now() > 0));
        }
        terminating();
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        synchronized (this) {
            List<Runnable> dropped = new ArrayList<>(queue);
            queue.clear();
            terminating();
            return dropped;
        }
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown && queue.isEmpty();
    }

    /**
     * Waits on the virtual clock (the explorer runs what is left meanwhile), parked until the scheduler terminates or
     * the clock passes the deadline, never on a real timer (a closer that looked again every millisecond went on after
     * the explorer had judged every thread quiet, on a busy machine); never blocks the explorer's thread.
     */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = world.now() + unit.toNanos(timeout);
        Thread me = Thread.currentThread();
        while (!isTerminated() && !world.isExplorerThread() && world.now() - deadline < 0) {
            synchronized (this) {
                awaiting.add(me);
            }
            try {
                if (!isTerminated()) {
                    world.parks.parkNanos(this, deadline - world.now());
                }
            }
            finally {
                synchronized (this) {
                    awaiting.remove(me);
                }
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
        return isTerminated();
    }

    @Override
    public String toString() {
        return name;
    }
}
