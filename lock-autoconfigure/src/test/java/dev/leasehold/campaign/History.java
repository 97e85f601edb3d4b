package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one campaign run did, as the checker reads it: the critical sections (from the grant as the caller
 * saw it to the release), the losses the instances were told of, the failures public methods threw, the
 * waits, and the faults. Times are nanoseconds since the run started, on one clock (both levels map theirs
 * onto it). Thread-safe; appended to by every worker and the nemesis.
 */
public final class History {

    /** What the fenced store said to a section's read and write. */
    public enum Verdict {
        ACCEPTED, READ_REFUSED, WRITE_REFUSED, NOT_WRITTEN
    }

    /**
     * One critical section. {@code callStart} is when the call that granted it began: a grant is known to
     * come after another only if its call began after the other was granted. {@code keptUntil} is when
     * Redis keeps the key after the release ({@code holdAtLeast}), or {@code endAt}.
     */
    public record Section(int id, String instance, String key, boolean shared, long token, boolean reentry,
            String op, long callStart, long grantedAt, long endAt, long holdNanos, Verdict verdict, boolean heldBefore,
            boolean heldAtEnd, boolean toldLost) {

        /**
         * Until when Redis keeps the key at the latest: the release, or {@code holdAtLeast} after the grant
         * (which came before the caller saw it).
         */
        long keptUntil() {
            return Math.max(endAt, grantedAt + holdNanos);
        }

        /** Until when Redis keeps the key at least: {@code holdAtLeast} after the call began, or the release. */
        long surelyKeptUntil() {
            return Math.max(endAt, callStart + holdNanos);
        }

        boolean accepted() {
            return verdict == Verdict.ACCEPTED || verdict == Verdict.NOT_WRITTEN;
        }

        boolean overlaps(Section other) {
            return grantedAt < other.surelyKeptUntil() && other.grantedAt < surelyKeptUntil();
        }

        @Override
        public String toString() {
            return op + "#" + id + "[" + instance + " " + key + (shared ? " READ" : "") + " token=" + token
                    + (reentry ? " re-entry" + (heldBefore ? "" : " of a holding not held") : "") + " " + ms(grantedAt) + "-" + ms(endAt) + " ms " + verdict
                    + (heldAtEnd ? " held" : "") + (toldLost ? " told-lost" : "") + "]";
        }
    }

    /** A loss an instance was told of (a {@code LockLostEvent}, or {@code wasLost()} after close). */
    public record Loss(String instance, String key, long token, long at) {
    }

    /** An exception a public method threw; {@code documented} says whether its contract names it there. */
    public record Failure(String op, String instance, String key, String type, String message, long at,
            boolean documented) {
    }

    /** One call that waited for a key, and how it ended. */
    public record Wait(String instance, String key, long start, long end, String outcome, String detail) {
    }

    /**
     * A fault the nemesis injected, over [start, end]; for {@code graceNanos} after it a waiter may still be
     * held up by it (a key held by a reply that was lost, a connection coming back), so L1 does not judge there.
     */
    public record Fault(String kind, String target, long start, long end, long graceNanos) {
    }

    /**
     * A wait's deadline: {@code end} is when the call returned (Long.MAX_VALUE while it still waits); a call
     * returns by its deadline, give or take one Redis round trip ({@code leasehold.redis-timeout}).
     */
    public record Deadline(String instance, String key, long start, long deadline, long end) {
    }

    /**
     * Fencing tokens the server handed out ({@code first} to {@code last}) at {@code at}; only a simulated server tells
     * them. {@code since}: when the call that got them began (a quorum decides a grant over several round trips, and
     * promises a token above those handed out before the call; one server hands them out at once: {@code at}).
     */
    public record Issued(String key, long first, long last, long at, long since) {

        public Issued(String key, long first, long last, long at) {
            this(key, first, last, at, at);
        }
    }

    private final java.util.function.LongSupplier clock;

    private volatile long origin;

    final ConcurrentLinkedQueue<Deadline> deadlines = new ConcurrentLinkedQueue<>();

    final ConcurrentLinkedQueue<Issued> issued = new ConcurrentLinkedQueue<>();

    public History() {
        this(System::nanoTime);
    }

    /** On another clock (the explorer's virtual one). */
    public History(java.util.function.LongSupplier clock) {
        this.clock = clock;
        this.origin = clock.getAsLong();
    }

    private final AtomicInteger ids = new AtomicInteger();

    final ConcurrentLinkedQueue<Section> sections = new ConcurrentLinkedQueue<>();

    final ConcurrentLinkedQueue<Loss> losses = new ConcurrentLinkedQueue<>();

    final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();

    final ConcurrentLinkedQueue<Wait> waits = new ConcurrentLinkedQueue<>();

    final ConcurrentLinkedQueue<Fault> faults = new ConcurrentLinkedQueue<>();

    private final Map<String, LongAdder> operations = new ConcurrentHashMap<>();

    /** The run starts now (after its set-up and warm-up): time 0 of the history. */
    public void start() {
        origin = clock.getAsLong();
    }

    /** Nanoseconds since the run started. */
    public long now() {
        return clock.getAsLong() - origin;
    }

    /** Maps a {@link System#nanoTime()} reading onto this history's clock. */
    public long at(long nanoTime) {
        return nanoTime - origin;
    }

    public int nextId() {
        return ids.incrementAndGet();
    }

    public void operation(String op) {
        operations.computeIfAbsent(op, name -> new LongAdder()).increment();
    }

    public void section(Section section) {
        sections.add(section);
    }

    public void lost(String instance, String key, long token) {
        losses.add(new Loss(instance, key, token, now()));
    }

    public void failure(Failure failure) {
        failures.add(failure);
    }

    public void waited(String instance, String key, long start, String outcome) {
        waited(instance, key, start, outcome, "");
    }

    /** With {@code detail}: what the waiter's instance saw of the key right after it gave up. */
    public void waited(String instance, String key, long start, String outcome, String detail) {
        waits.add(new Wait(instance, key, start, now(), outcome, detail));
    }

    public void fault(String kind, String target, long start, long end) {
        fault(kind, target, start, end, 0);
    }

    public void fault(String kind, String target, long start, long end, long graceNanos) {
        faults.add(new Fault(kind, target, start, end, graceNanos));
    }

    public void deadline(Deadline deadline) {
        deadlines.add(deadline);
    }

    public void issued(Issued block) {
        issued.add(block);
    }

    public List<Deadline> deadlines() {
        return new ArrayList<>(deadlines);
    }

    public List<Issued> issued() {
        return new ArrayList<>(issued);
    }

    public List<Section> sections() {
        return new ArrayList<>(sections);
    }

    public List<Fault> faults() {
        return new ArrayList<>(faults);
    }

    public List<Loss> losses() {
        return new ArrayList<>(losses);
    }

    public List<Failure> failures() {
        return new ArrayList<>(failures);
    }

    public List<Wait> waits() {
        return new ArrayList<>(waits);
    }

    /** Operations by kind, sorted by name. */
    public Map<String, Long> operations() {
        Map<String, Long> counts = new TreeMap<>();
        operations.forEach((op, count) -> counts.put(op, count.sum()));
        return counts;
    }

    public long operationCount() {
        return operations.values().stream().mapToLong(LongAdder::sum).sum();
    }

    static String ms(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6);
    }
}
