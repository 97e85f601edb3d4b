package dev.leasehold;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The {@link Lock} view of one key ({@link LockService#asLock(String)}): every {@code lock}/{@code tryLock}
 * takes a watchdog-renewed lock through the service, and the calling thread's {@code unlock} closes its
 * most recent handle. Re-entrant per thread; a thread that holds nothing through this view cannot unlock it.
 */
final class LeaseholdLock implements Lock {

    /** How long one wait of {@code lock()} lasts before it looks again (waiting is woken by the release). */
    static final Duration WAIT_SLICE = Duration.ofSeconds(30);

    private final LockService service;

    private final String key;

    /** The handles each thread holds through this view, innermost first. */
    private final Map<Thread, Deque<LockHandle>> holds = new ConcurrentHashMap<>();

    LeaseholdLock(LockService service, String key) {
        if (key == null || key.isBlank()) {
            throw new LockKeyException("Lock key must not be null or blank, was " + (key == null ? "null" : "'" + key + "'"));
        }
        this.service = service;
        this.key = key;
    }

    /**
     * Waits as long as other owners hold the key, ignoring interrupts (the interrupt status is kept).
     * @throws LockAcquisitionException when Redis could not be reached for a whole {@link #WAIT_SLICE}
     */
    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (take(WAIT_SLICE)) {
                        return;
                    }
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        checkInterrupt();
        while (!take(WAIT_SLICE)) {
            checkInterrupt();
        }
    }

    /** One try, no wait. */
    @Override
    public boolean tryLock() {
        try {
            return take(Duration.ZERO);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        checkInterrupt();
        return take(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
    }

    /**
     * Releases one hold of the calling thread.
     * @throws IllegalMonitorStateException when the calling thread holds nothing through this lock
     */
    @Override
    public void unlock() {
        Thread thread = Thread.currentThread();
        Deque<LockHandle> handles = holds.get(thread);
        if (handles == null || handles.isEmpty()) {
            throw new IllegalMonitorStateException("Thread '" + thread.getName() + "' does not hold the lock on '"
                    + key + "' (through this Lock), so it cannot unlock it");
        }
        LockHandle handle = handles.pop();
        if (handles.isEmpty()) {
            holds.remove(thread);
        }
        handle.close();
    }

    /** Not supported: there are no distributed conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("A Leasehold lock has no conditions (lock '" + key + "')");
    }

    private boolean take(Duration wait) throws InterruptedException {
        Optional<LockHandle> handle;
        try {
            handle = service.tryLock(key, wait, null);
        }
        catch (LockAcquisitionException ex) {
            if (ex.getCause() instanceof InterruptedException interrupted) {
                Thread.interrupted(); // the engine kept the status; the caller gets the exception instead
                throw interrupted;
            }
            throw ex;
        }
        if (handle.isEmpty()) {
            return false;
        }
        holds.computeIfAbsent(Thread.currentThread(), thread -> new ArrayDeque<>()).push(handle.get());
        return true;
    }

    private static void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    @Override
    public String toString() {
        return "LeaseholdLock['" + key + "']";
    }
}
