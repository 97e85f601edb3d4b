package dev.leasehold;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
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
 * <p>
 * A lock that was lost (its lease ran out or Redis lost the key) is no longer held: {@code unlock()} throws
 * {@link LockLostException} for each of the thread's holds on it, and locking again takes the key anew.
 */
final class LeaseholdLock implements Lock {

    /**
     * The wait of {@code lock()} and {@code lockInterruptibly()}: one wait without a time limit, so it keeps its
     * place in the queues; the engine ends it only when Redis cannot be reached for a whole lease.
     */
    private static final Duration NO_TIME_LIMIT = ChronoUnit.FOREVER.getDuration();

    private final LockService service;

    private final String key;

    private final Map<Thread, Holds> holds = new ConcurrentHashMap<>();

    LeaseholdLock(LockService service, String key) {
        if (key == null || key.isBlank()) {
            throw new LockKeyException("Lock key must not be null or blank, was " + (key == null ? "null" : "'" + key + "'"));
        }
        this.service = service;
        this.key = key;
    }

    /**
     * Waits as long as other owners hold the key, in one wait that keeps its place in the queues; ignores
     * interrupts (the status is kept; an interrupt makes it wait again, from the back).
     * @throws LockAcquisitionException when Redis could not be reached for a whole lease
     * ({@code leasehold.lease-time}), or the application is shutting down
     */
    @Override
    public void lock() {
        while (!acquireUninterruptibly(NO_TIME_LIMIT)) {
            // only a service that caps waits gets here: wait again
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        checkInterrupt();
        while (!acquire(NO_TIME_LIMIT, true)) {
            checkInterrupt();
        }
    }

    /** One try, no wait: false when another owner holds the key. */
    @Override
    public boolean tryLock() {
        return acquireUninterruptibly(Duration.ZERO);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        checkInterrupt();
        return acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))), true);
    }

    /**
     * Releases one hold of the calling thread.
     * @throws IllegalMonitorStateException when the calling thread holds nothing through this lock
     * @throws LockLostException when the lock had been lost (the hold is given up all the same)
     */
    @Override
    public void unlock() {
        Thread thread = Thread.currentThread();
        Holds mine = holds.get(thread);
        if (mine == null || mine.isEmpty()) {
            throw new IllegalMonitorStateException("Thread '" + thread.getName() + "' does not hold the lock on '"
                    + key + "' (through this Lock), so it cannot unlock it");
        }
        LockHandle handle = mine.handles.poll();
        if (handle == null) {
            mine.lost--;
        }
        if (mine.isEmpty()) {
            holds.remove(thread);
        }
        if (handle == null) {
            throw lost();
        }
        // a lease that ran out unconfirmed is lost, even if the watchdog has not said so yet (its next round
        // may come a moment later): the work since may not have been protected
        boolean leaseGood = handle.isHeld();
        handle.close();
        if (!leaseGood || wasLost(handle)) {
            throw lost();
        }
    }

    /** Not supported: there are no distributed conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("A Leasehold lock has no conditions (lock '" + key + "')");
    }

    private boolean acquireUninterruptibly(Duration wait) {
        try {
            return acquire(wait, false);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("not interruptible", ex); // never: interrupts are retried
        }
    }

    /**
     * Takes the lock for the calling thread. When the thread's holds are on a lost lock, they are given up
     * first; if the new lock is granted they move to it (so the thread's unlocks balance as before, as with
     * Spring Integration's {@code RedisLockRegistry}), else each stays for {@code unlock()} to report.
     * @param interruptible whether an interrupt ends the wait; if not, it waits again and the status is kept
     */
    private boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
        Thread thread = Thread.currentThread();
        boolean interrupted = !interruptible && Thread.interrupted();
        Holds mine = holds.computeIfAbsent(thread, ignored -> new Holds());
        int carried = giveUpLostHolds(mine);
        boolean taken = false;
        try {
            while (true) {
                try {
                    taken = take(wait, mine, carried);
                    return taken;
                }
                catch (InterruptedException ex) {
                    if (interruptible) {
                        throw ex;
                    }
                    interrupted = true;
                }
                catch (LockAcquisitionException ex) {
                    // the lease ran out between the check above and the engine's ("was lost ... close its handle")
                    int lostMeanwhile = giveUpLostHolds(mine);
                    if (lostMeanwhile == 0) {
                        throw ex;
                    }
                    carried += lostMeanwhile;
                }
            }
        }
        finally {
            if (!taken) {
                mine.lost += carried;
            }
            if (mine.isEmpty()) {
                holds.remove(thread, mine);
            }
            if (interrupted) {
                thread.interrupt();
            }
        }
    }

    /**
     * Closes the thread's handles when their lock is no longer held (lost, or its lease ran out): that ends
     * this JVM's part, and the release never deletes a key another owner holds. Returns how many there were.
     */
    private static int giveUpLostHolds(Holds mine) {
        LockHandle current = mine.handles.peek();
        if (current == null || current.isHeld()) {
            return 0; // re-entries share one acquisition: all held, or none
        }
        int count = mine.handles.size();
        while (!mine.handles.isEmpty()) {
            mine.handles.pop().close();
        }
        return count;
    }

    private boolean take(Duration wait, Holds mine, int carried) throws InterruptedException {
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
        mine.handles.push(handle.get());
        for (int moved = 0; moved < carried; moved++) {
            Optional<LockHandle> reentry = reenter();
            if (reentry.isEmpty()) {
                mine.lost += carried - moved;
                break;
            }
            mine.handles.push(reentry.get());
        }
        return true;
    }

    /** A re-entry of the lock the thread was just granted: at once, without a wait. */
    private Optional<LockHandle> reenter() {
        try {
            return service.tryLock(key, Duration.ZERO, null);
        }
        catch (RuntimeException ex) {
            return Optional.empty(); // lost again at once: the hold stays for unlock() to report
        }
    }

    private static boolean wasLost(LockHandle handle) {
        try {
            return handle.wasLost();
        }
        catch (UnsupportedOperationException ex) {
            return false; // a LockService that cannot tell
        }
    }

    private LockLostException lost() {
        return new LockLostException(key, "The lock on '" + key + "' was lost before this unlock (its lease ran out "
                + "or Redis lost the key; a LockLostEvent was published): another owner may have held it "
                + "meanwhile, so the work done under it was not protected to the end. The hold is given up; no key "
                + "of another owner was touched");
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

    /**
     * What one thread holds through this view: the handles of its current acquisition (innermost first;
     * re-entries share it), and below them holds of a lost lock that were given up when the thread locked
     * again without getting it ({@code unlock()} reports each, after the handles).
     */
    private static final class Holds {

        final Deque<LockHandle> handles = new ArrayDeque<>();

        int lost;

        boolean isEmpty() {
            return handles.isEmpty() && lost == 0;
        }
    }
}
