package dev.leasehold.benchmarks;

/** The timed scenarios, in report order. */
public enum Scenario {

    UNCONTENDED_ONE_THREAD("1", "Uncontended, one thread", "lock+unlock cycles/s"),

    UNCONTENDED_16_THREADS("2", "Uncontended, 16 threads on distinct keys", "lock+unlock cycles/s"),

    CONTENDED_ONE_JVM("3", "Contended: 8 threads on one key in one JVM, 1 ms critical section", "acquisitions/s"),

    CONTENDED_TWO_JVMS("4", "Contended: two JVMs of 8 threads each on one key, 1 ms critical section", "acquisitions/s"),

    READ_HEAVY("5", "Read-heavy read/write lock: 8 threads on one key, 90% reads, 1 ms critical section", "acquisitions/s");

    final String number;

    final String title;

    final String unit;

    Scenario(String number, String title, String unit) {
        this.number = number;
        this.title = title;
        this.unit = unit;
    }

    boolean contended() {
        return this != UNCONTENDED_ONE_THREAD && this != UNCONTENDED_16_THREADS;
    }

    static Scenario byNumber(String number) {
        for (Scenario scenario : values()) {
            if (scenario.number.equals(number)) {
                return scenario;
            }
        }
        throw new IllegalArgumentException("No scenario " + number);
    }
}
