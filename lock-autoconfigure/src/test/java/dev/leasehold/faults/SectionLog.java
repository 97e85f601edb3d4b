package dev.leasehold.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The critical sections the workers recorded, and the invariant checks over them. Times are microseconds
 * of one clock (the machine's): call and grant from the worker, read and end from the resource Redis.
 */
final class SectionLog {

    record Section(String worker, long token, long callMicros, long grantMicros, long readMicros, long endMicros, String verdict,
            boolean heldAfter, boolean lostEvent) {

        static Section parse(String line) {
            String[] f = line.split("\\|");
            return new Section(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                    Long.parseLong(f[4]), Long.parseLong(f[5]), f[6], Boolean.parseBoolean(f[7]), Boolean.parseBoolean(f[8]));
        }

        boolean accepted() {
            return verdict.equals("A");
        }

        boolean overlaps(Section other) {
            return readMicros <= other.endMicros && other.readMicros <= endMicros;
        }

        @Override
        public String toString() {
            return worker + " token " + token + " [" + readMicros + ".." + endMicros + "] " + verdict
                    + (accepted() ? "" : " held=" + heldAfter + " lostEvent=" + lostEvent);
        }
    }

    /** What the checks found. */
    record Verdict(int sections, int accepted, int refused, int overlaps, List<String> violations) {
    }

    final List<Section> sections;

    final long counter;

    /**
     * Writes the store accepted, counted by the store in the same step as each write; -1: not counted (the
     * recorded accepted sections stand in for them).
     */
    final long acceptedWrites;

    SectionLog(List<Section> sections, long counter) {
        this(sections, counter, -1);
    }

    SectionLog(List<Section> sections, long counter, long acceptedWrites) {
        this.sections = List.copyOf(sections);
        this.counter = counter;
        this.acceptedWrites = acceptedWrites;
    }

    Verdict check() {
        List<String> violations = new ArrayList<>();
        List<Section> accepted = sections.stream().filter(Section::accepted).toList();
        // a lost update leaves the read-modify-write counter below the writes the store accepted; a worker killed
        // between its write and its log line leaves a write without a recorded section, which is no lost update
        long writes = acceptedWrites >= 0 ? acceptedWrites : accepted.size();
        if (counter != writes) {
            violations.add("lost update: counter is " + counter + " after " + writes + " accepted writes");
        }
        if (accepted.size() > writes) {
            violations.add("more accepted sections (" + accepted.size() + ") than writes the store accepted (" + writes + ")");
        }
        List<Section> byEnd = accepted.stream().sorted(Comparator.comparingLong(Section::endMicros)).toList();
        for (int i = 1; i < byEnd.size(); i++) {
            if (byEnd.get(i).token() <= byEnd.get(i - 1).token()) {
                violations.add("accepted tokens not increasing: " + byEnd.get(i - 1) + " then " + byEnd.get(i));
            }
        }
        // grants in time order get increasing tokens (the contract), whatever the fencing check said: a section a worker
        // had before another's call began is older (a pause between Redis's grant and the worker's clock reading can
        // put a grant's record after a newer one; calls that overlap have no order)
        List<Section> byGrant = sections.stream().sorted(Comparator.comparingLong(Section::grantMicros)).toList();
        Section highest = null;
        int granted = 0;
        for (Section section : sections.stream().sorted(Comparator.comparingLong(Section::callMicros)).toList()) {
            while (granted < byGrant.size() && byGrant.get(granted).grantMicros() < section.callMicros()) {
                Section older = byGrant.get(granted++);
                highest = highest == null || older.token() > highest.token() ? older : highest;
            }
            if (highest != null && section.token() <= highest.token()) {
                violations.add("token went backwards: " + highest + " granted before the call of " + section + " began");
            }
        }
        int overlaps = 0;
        List<Section> byRead = sections.stream().sorted(Comparator.comparingLong(Section::readMicros)).toList();
        for (int i = 0; i < byRead.size(); i++) {
            for (int j = i + 1; j < byRead.size() && byRead.get(j).readMicros() <= byRead.get(i).endMicros(); j++) {
                Section a = byRead.get(i);
                Section b = byRead.get(j);
                if (a.overlaps(b)) {
                    overlaps++;
                    if (a.accepted() && b.accepted()) {
                        violations.add("two holders inside, both writes accepted: " + a + " and " + b);
                    }
                }
            }
        }
        for (Section section : sections) {
            if (!section.accepted() && (section.heldAfter() || !section.lostEvent())) {
                violations.add("refused by fencing, but the holder was not told its lock was lost: " + section);
            }
        }
        return new Verdict(sections.size(), accepted.size(), sections.size() - accepted.size(), overlaps, violations);
    }

    /** The first section (in read order) matching the filter that was read after {@code micros}. */
    Optional<Section> firstReadAfter(long micros, Predicate<Section> filter) {
        return sections.stream()
            .filter(section -> section.readMicros() > micros && filter.test(section))
            .min(Comparator.comparingLong(Section::readMicros));
    }

    List<Section> of(String worker) {
        return sections.stream().filter(section -> section.worker().equals(worker)).toList();
    }
}
