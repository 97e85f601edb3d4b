package dev.leasehold.explorer;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import dev.leasehold.LockMode;

/**
 * Which operation an idle caller does next, drawn from the seed: the mix of a standard run, a hand-off run and a
 * liveness run ({@link RunConfig}), with their waits, leases, modes and keys. {@link Operations} does it and records
 * what the checker needs.
 */
final class OperationMix {

    private final Operations operations;

    private final Random random;

    private final List<String> keys;

    private final Duration lease;

    /** A run shaped for hand-offs (see {@link RunConfig#handOffRun()}), or for the fair queue's liveness. */
    private final boolean handOffs;

    private final boolean liveness;

    /** A Cluster run ({@link ClusterRun}): several exclusive locks held at once, renewed by the watchdog. */
    private final boolean cluster;

    OperationMix(Operations operations, Random random, List<String> keys, RunConfig config) {
        this.operations = operations;
        this.random = random;
        this.keys = keys;
        this.lease = config.lease();
        this.handOffs = config.handOffs();
        this.liveness = config.liveness();
        this.cluster = config.cluster();
    }

    private Duration someWait() {
        if (handOffs) { // long enough to queue behind the holder and be handed the lock
            return random.nextInt(8) == 0 ? Duration.ofMillis(20) : random.nextBoolean() ? Duration.ofSeconds(2)
                    : Duration.ofSeconds(6);
        }
        return switch (random.nextInt(5)) {
            case 0 -> Duration.ZERO;
            case 1 -> Duration.ofMillis(20);
            case 2 -> Duration.ofMillis(300);
            case 3 -> Duration.ofSeconds(2);
            default -> Duration.ofSeconds(6);
        };
    }

    private Duration someLease() {
        if (handOffs) {
            return random.nextInt(10) == 0 ? lease.multipliedBy(2) : null;
        }
        int pick = random.nextInt(8);
        // or a short one, which a section may outlast: its release then comes late, refused (a free-key stall's window)
        return pick < 2 ? lease.multipliedBy(2) : pick == 2 ? Duration.ofMillis(100 + random.nextInt(300)) : null;
    }

    /**
     * A third of the acquisitions READ in a standard run, a sixth in hand-off and liveness runs (shaped for writers'
     * hand-offs and queue entries); the rest WRITE or EXCLUSIVE, the same lock.
     */
    private LockMode someMode() {
        if (random.nextInt(handOffs || liveness ? 6 : 3) == 0) {
            return LockMode.READ;
        }
        return random.nextBoolean() ? LockMode.WRITE : LockMode.EXCLUSIVE;
    }

    private String someKey() {
        return keys.get(random.nextInt(keys.size()));
    }

    /** Picks an operation for an idle client and hands it over; its name for the trace. */
    String start(Client client) {
        Client.Instance instance = client.instance;
        List<Section> mine = operations.sections(instance, client);
        int choice = random.nextInt(100);
        if (handOffs) {
            return startForHandOffs(client, mine, choice);
        }
        if (liveness) {
            return startForLiveness(client, mine, choice);
        }
        if (cluster) {
            return startForCluster(client, mine, choice);
        }
        if (choice < 28) {
            return operations.tryLock(client, someKey(), someMode(), someWait(), someLease());
        }
        if (choice < 56) {
            return operations.tryLockAsync(client, someKey(), someMode(), someWait(), someLease());
        }
        if (mine.isEmpty()) {
            return operations.tryLockAsync(client, someKey(), someMode(), someWait(), null);
        }
        Section section = mine.get(random.nextInt(mine.size()));
        return withHeld(client, section, choice, 74, 82, 88, 94);
    }

    /**
     * In a hand-off run: blocking waits, and blocking closes by the lock's own thread mostly (a lock goes to a waiter
     * of its instance; a release with nobody waiting lingers).
     */
    private String startForHandOffs(Client client, List<Section> mine, int choice) {
        if (mine.isEmpty()) {
            return choice < 70 ? operations.tryLock(client, someKey(), someMode(), someWait(), someLease())
                    : operations.tryLockAsync(client, someKey(), someMode(), someWait(), someLease());
        }
        Section section = mine.get(random.nextInt(mine.size()));
        return withHeld(client, section, choice, 60, 70, 78, 90);
    }

    /**
     * A Cluster run: a caller takes a second lock while it holds one (its instance's watchdog then renews several in a
     * batch), exclusive mostly and renewed by the watchdog, with waits short enough that holders keep their locks
     * across many ticks; closes come less often than in a standard run.
     */
    private String startForCluster(Client client, List<Section> mine, int choice) {
        if (mine.isEmpty() || mine.size() < 3 && choice < 85) {
            LockMode mode = random.nextInt(8) == 0 ? LockMode.READ : random.nextBoolean() ? LockMode.WRITE : LockMode.EXCLUSIVE;
            Duration wait = new Duration[] { Duration.ZERO, Duration.ofMillis(20), Duration.ofMillis(300),
                    Duration.ofSeconds(2) }[random.nextInt(4)];
            Duration leaseTime = random.nextInt(6) == 0 ? lease.multipliedBy(2) : null;
            return choice % 2 == 0 ? operations.tryLock(client, someKey(), mode, wait, leaseTime)
                    : operations.tryLockAsync(client, someKey(), mode, wait, leaseTime);
        }
        Section section = mine.get(random.nextInt(mine.size()));
        return withHeld(client, section, choice, 84, 88, 92, 97);
    }

    /** A liveness run: blocking waits (its instance's only waiter) queued for several refresh intervals, closes. */
    private String startForLiveness(Client client, List<Section> mine, int choice) {
        if (mine.isEmpty()) {
            return operations.tryLock(client, someKey(), someMode(), choice < 80 ? Duration.ofSeconds(6) : Duration.ofSeconds(2),
                    null);
        }
        Section section = mine.get(random.nextInt(mine.size()));
        return choice < 85 ? operations.close(client, section, false) : operations.holdAtLeast(client, section);
    }

    /**
     * What a caller does with one of its locks, by where {@code choice} (0-99) falls: below {@code close} a blocking
     * close, below {@code closeAsync} an async one, below {@code reenter} a re-entry (by its own thread), below
     * {@code holdAtLeast} (or on a renewed lease) a holdAtLeast, else an extend.
     */
    private String withHeld(Client client, Section section, int choice, int close, int closeAsync, int reenter,
            int holdAtLeast) {
        if (choice < close) {
            return operations.close(client, section, false);
        }
        if (choice < closeAsync) {
            return operations.close(client, section, true);
        }
        if (choice < reenter && section.owner == client) {
            return operations.reenter(client, section);
        }
        if (choice < holdAtLeast || !section.fixedLease) {
            return operations.holdAtLeast(client, section);
        }
        return operations.extend(client, section);
    }
}
