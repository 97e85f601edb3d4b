package dev.leasehold.benchmarks;

import java.time.Duration;

/** The timed scenarios, in report order. */
public enum Scenario {

    UNCONTENDED_ONE_THREAD("1", "Uncontended, one thread", "lock+unlock cycles/s", 1, 1, 1, null),

    UNCONTENDED_16_THREADS("2", "Uncontended, 16 threads on distinct keys", "lock+unlock cycles/s", 1, 1, 16, null),

    CONTENDED_ONE_JVM("3", "Contended: 8 threads on one key in one JVM, 1 ms critical section", "acquisitions/s",
            1, 1, 8, Duration.ofMillis(1)),

    CONTENDED_TWO_JVMS("4", "Contended: two JVMs of 8 threads each on one key, 1 ms critical section",
            "acquisitions/s", 2, 1, 8, Duration.ofMillis(1)),

    READ_HEAVY("5", "Read-heavy read/write lock: 8 threads on one key, 90% reads, 1 ms critical section",
            "acquisitions/s", 1, 1, 8, Duration.ofMillis(1)),

    FOUR_INSTANCES_EMPTY("8", "Several instances: 4 clients × 2 threads in one JVM on one key, empty critical section",
            "acquisitions/s", 1, 4, 2, Duration.ZERO),

    FOUR_INSTANCES_1MS("9", "Several instances: 4 clients × 2 threads in one JVM on one key, 1 ms critical section",
            "acquisitions/s", 1, 4, 2, Duration.ofMillis(1)),

    TWO_JVMS_EMPTY("10", "Several instances: two JVMs of 4 threads each on one key, empty critical section",
            "acquisitions/s", 2, 1, 4, Duration.ZERO),

    TWO_JVMS_1MS("11", "Several instances: two JVMs of 4 threads each on one key, 1 ms critical section",
            "acquisitions/s", 2, 1, 4, Duration.ofMillis(1)),

    HOT_KEY_EMPTY("12", "Hot key: 8 threads of one client in one JVM on one key, empty critical section",
            "acquisitions/s", 1, 1, 8, Duration.ZERO);

    final String number;

    final String title;

    final String unit;

    /** 1 or 2: the second JVM runs as many threads as this one, with its own client. */
    final int jvms;

    /** Independent clients (contender instances) per JVM, as separate pods would have. */
    final int instancesPerJvm;

    /** Threads per client. */
    final int threadsPerInstance;

    /** How long each holder keeps the lock; null for the uncontended scenarios (they release at once). */
    final Duration criticalSection;

    Scenario(String number, String title, String unit, int jvms, int instancesPerJvm, int threadsPerInstance,
            Duration criticalSection) {
        this.number = number;
        this.title = title;
        this.unit = unit;
        this.jvms = jvms;
        this.instancesPerJvm = instancesPerJvm;
        this.threadsPerInstance = threadsPerInstance;
        this.criticalSection = criticalSection;
    }

    boolean contended() {
        return this != UNCONTENDED_ONE_THREAD && this != UNCONTENDED_16_THREADS;
    }

    boolean twoJvms() {
        return jvms == 2;
    }

    /** The scenarios of issue 14: one key shared by several clients, or a hot key with an empty section. */
    boolean spread() {
        return ordinal() >= FOUR_INSTANCES_EMPTY.ordinal();
    }

    /** Several independent clients (instances or JVMs) contend: their turns are compared. */
    boolean severalClients() {
        return jvms * instancesPerJvm > 1;
    }

    /** The one-client scenario with the same critical section, whose command count several clients must not exceed. */
    Scenario oneClientReference() {
        return criticalSection != null && criticalSection.isZero() ? HOT_KEY_EMPTY : CONTENDED_ONE_JVM;
    }

    static Scenario byNumber(String number) {
        for (Scenario scenario : values()) {
            if (scenario.number.equals(number)) {
                return scenario;
            }
        }
        throw new IllegalArgumentException("No scenario " + number + " (6 and 7 come with the others)");
    }
}
