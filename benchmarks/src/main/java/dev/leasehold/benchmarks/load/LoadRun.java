package dev.leasehold.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.leasehold.LockMode;
import dev.leasehold.benchmarks.contenders.Contender;

/**
 * Runs a {@link Workload} on one contender in this JVM for a window that starts at a given wall-clock time
 * (so two JVMs can start together). Only acquisitions granted inside the window count; a thread stops
 * trying when the window ends, and a lock granted after it is released at once.
 */
public final class LoadRun {

    /** Longer than any run: a wait that runs out means something is wrong, and is reported. */
    static final Duration WAIT = Duration.ofSeconds(30);

    private static final int MAX_ERRORS_PER_THREAD = 20;

    private LoadRun() {
    }

    public static RunResult run(Contender contender, Workload workload, ExclusionCheck check, long startAtEpochMillis,
            Duration window) throws InterruptedException {
        return run(List.of(contender), workload, check, startAtEpochMillis, window);
    }

    /**
     * Runs {@code workload.threads()} threads on each of {@code instances} (independent clients of the same
     * contender, as separate application instances would be) at once.
     */
    public static RunResult run(List<Contender> instances, Workload workload, ExclusionCheck check,
            long startAtEpochMillis, Duration window) throws InterruptedException {
        long startNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startAtEpochMillis - System.currentTimeMillis());
        long endNanos = startNanos + window.toNanos();
        check.reset();
        List<Worker> workers = new ArrayList<>();
        for (int instance = 0; instance < instances.size(); instance++) {
            Contender contender = instances.get(instance);
            for (int t = 0; t < workload.threads(); t++) {
                int i = instance * workload.threads() + t;
                String key = workload.sharedKey() ? workload.key() : workload.key() + ":" + i;
                Worker worker = new Worker(contender, workload, check, key, startNanos, endNanos);
                worker.thread = new Thread(worker, "bench-" + contender.id() + "-" + instance + "-" + t);
                worker.thread.setDaemon(true);
                workers.add(worker);
            }
        }
        workers.forEach(worker -> worker.thread.start());
        long joinDeadline = endNanos + WAIT.toNanos() + TimeUnit.SECONDS.toNanos(10);
        long acquisitions = 0;
        long timeouts = 0;
        long errors = 0;
        String firstProblem = null;
        int sampleCount = 0;
        for (Worker worker : workers) {
            worker.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
            if (worker.thread.isAlive()) {
                worker.thread.interrupt();
                errors++;
                firstProblem = firstProblem != null ? firstProblem : worker.thread.getName() + " did not finish";
                continue;
            }
            acquisitions += worker.acquisitions;
            timeouts += worker.timeouts;
            errors += worker.errors;
            firstProblem = firstProblem != null ? firstProblem : worker.firstError;
            sampleCount += worker.waitCount;
        }
        long[] waits = new long[sampleCount];
        int offset = 0;
        for (Worker worker : workers) {
            if (!worker.thread.isAlive()) {
                System.arraycopy(worker.waits, 0, waits, offset, worker.waitCount);
                offset += worker.waitCount;
            }
        }
        Arrays.sort(waits, 0, offset);
        // a thread that did not finish counts 0: its client gave it no turn that completed
        long[][] perClientThreads = new long[instances.size()][workload.threads()];
        for (int i = 0; i < workers.size(); i++) {
            Worker worker = workers.get(i);
            perClientThreads[i / workload.threads()][i % workload.threads()] =
                    worker.thread.isAlive() ? 0 : worker.acquisitions;
        }
        long violations = check.violations();
        if (firstProblem == null && violations > 0) {
            firstProblem = check.firstViolation();
        }
        else if (violations > 0) {
            firstProblem = check.firstViolation() + "; also: " + firstProblem;
        }
        return new RunResult(acquisitions, timeouts, errors, violations, firstProblem,
                offset == waits.length ? waits : Arrays.copyOf(waits, offset), window.toNanos() / 1e9, perClientThreads);
    }

    private static final class Worker implements Runnable {

        private final Contender contender;

        private final Workload workload;

        private final ExclusionCheck check;

        private final String key;

        private final long startNanos;

        private final long endNanos;

        Thread thread;

        long acquisitions;

        long timeouts;

        long errors;

        String firstError;

        long[] waits = new long[1024];

        int waitCount;

        Worker(Contender contender, Workload workload, ExclusionCheck check, String key, long startNanos, long endNanos) {
            this.contender = contender;
            this.workload = workload;
            this.check = check;
            this.key = key;
            this.startNanos = startNanos;
            this.endNanos = endNanos;
        }

        @Override
        public void run() {
            long untilStart;
            while ((untilStart = startNanos - System.nanoTime()) > 0) {
                LockSupport.parkNanos(untilStart);
            }
            long criticalNanos = workload.criticalSection().toNanos();
            while (System.nanoTime() < endNanos && !Thread.currentThread().isInterrupted()) {
                LockMode mode = mode();
                long askedAt = System.nanoTime();
                boolean[] counted = { false };
                try {
                    boolean granted = contender.withLock(key, mode, WAIT, () -> {
                        long grantedAt = System.nanoTime();
                        if (grantedAt >= endNanos) {
                            return;
                        }
                        check.enter(key, mode);
                        if (criticalNanos > 0) {
                            LockSupport.parkNanos(criticalNanos);
                        }
                        check.exit(key, mode);
                        record(grantedAt - askedAt);
                        counted[0] = true;
                    });
                    if (!granted) {
                        timeouts++;
                    }
                    else if (counted[0]) {
                        acquisitions++;
                    }
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                catch (Exception ex) {
                    errors++;
                    if (firstError == null) {
                        firstError = contender.id() + ": " + ex;
                    }
                    if (errors >= MAX_ERRORS_PER_THREAD) {
                        return;
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            }
        }

        private LockMode mode() {
            if (workload.readPercent() < 0) {
                return LockMode.EXCLUSIVE;
            }
            return ThreadLocalRandom.current().nextInt(100) < workload.readPercent() ? LockMode.READ : LockMode.WRITE;
        }

        private void record(long waitNanos) {
            if (waitCount == waits.length) {
                waits = Arrays.copyOf(waits, waits.length * 2);
            }
            waits[waitCount++] = waitNanos;
        }
    }
}
