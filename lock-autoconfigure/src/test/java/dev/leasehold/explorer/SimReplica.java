package dev.leasehold.explorer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.leasehold.engine.server.LockKeys;

/**
 * Replication of the simulated Redis to one replica, as Redis does it (Sentinel, one replica): asynchronous, the
 * primary's writes reach the replica in order, one command's effects at a time (a script replicates as a whole), when
 * the explorer delivers them (a step of its own, {@link #add}); {@code WAIT} ({@link #await}) says how many replicas
 * hold every write up to now; a failover ({@link #failover}) promotes the replica, and the writes it had not received
 * are lost. The replication link may be cut for a while (a slow network, a busy replica): nothing is delivered, and no
 * WAIT is acknowledged. Runs only on the explorer's thread, as {@link SimRedis}.
 */
final class SimReplica {

    /** One write of the primary (a command that changed its data): the data after it, and what losing it leaves. */
    private record Write(SimRedis.Data data, Runnable ifLost) {
    }

    private final SimRedis primary;

    private final SimWorld world;

    private final Random random;

    /** Whether the engines run with {@code leasehold.replica-ack.replicas=1} ({@link ReplicaAcks}). */
    final boolean acknowledged;

    /** The primary's writes the replica has not applied yet, oldest first. */
    private final ArrayDeque<Write> stream = new ArrayDeque<>();

    /** What the replica holds. */
    private SimRedis.Data applied;

    /** The primary's data at its last write, as text (a command that leaves it so wrote nothing). */
    private String lastWritten;

    /**
     * A holder's lock a failover lost with replica acknowledgement: the owner token held the key on the primary (its
     * lock or a read lease) and the promoted replica had no trace of it, not even a lease run out (at: virtual ns).
     */
    record LostHolder(String key, String token, long at) {
    }

    /** What failovers lost of holders that the primary had ({@link FailoverChecks} judges them). */
    final List<LostHolder> lostHolders = new ArrayList<>();

    /** Until when (virtual ns) the replication link is cut (nothing reaches the replica, no WAIT acknowledged); 0: linked. */
    private long linkDownUntil;

    /** How eagerly the replica applies the next write (this run's pace: close behind, or often a few writes behind). */
    private final double applyWeight;

    SimReplica(SimRedis primary, SimWorld world, Random random, boolean acknowledged) {
        this.primary = primary;
        this.world = world;
        this.random = random;
        this.acknowledged = acknowledged;
        this.applyWeight = new double[] { 4, 1, 0.25 }[random.nextInt(3)];
        resynced();
    }

    /** A command ran on the primary: if it wrote, its effects join the stream; {@code ifLost}: see {@link #failover}. */
    void primaryRan(Runnable ifLost) {
        SimRedis.Data now = primary.copy();
        String text = now.toString();
        if (!text.equals(lastWritten)) {
            lastWritten = text;
            stream.add(new Write(now, ifLost));
        }
    }

    /** The replica holds what the primary holds (a full resynchronization, after a restart or a failover). */
    void resynced() {
        stream.clear();
        applied = primary.copy();
        lastWritten = applied.toString();
    }

    private boolean linked() {
        return world.now() - linkDownUntil >= 0;
    }

    /** The replica applies the primary's next write. */
    private void applyNext() {
        applied = stream.poll().data();
        world.trace("replica applies the next write (" + stream.size() + " more behind)");
    }

    /**
     * {@code WAIT 1 timeout} right after a script, on its connection (AcknowledgedWrites): how many replicas hold every
     * write up to now. A linked replica catches up within the timeout, unless it is slow this time (one in ten); a cut
     * link acknowledges nothing that had not reached the replica before.
     */
    long await() {
        primaryRan(() -> {
        }); // the script's own write comes first (a lost acquire, renewal or reservation leaves nothing to excuse)
        if (!stream.isEmpty() && linked() && random.nextInt(10) != 0) {
            applied = stream.peekLast().data();
            stream.clear();
        }
        return stream.isEmpty() ? 1 : 0;
    }

    /**
     * The replica's steps and faults: its next write applied, its link cut; a failover is {@link Nemesis#loseKey}, and
     * aimed where it loses most: while the replica lacks the lock of one who holds it on the primary (without
     * acknowledgement a holder's; with it, a grant the engine must not count, or a release).
     */
    void add(List<Explorer.Choice> choices, double faults, List<String> keys, Nemesis nemesis) {
        if (!stream.isEmpty() && linked()) {
            choices.add(new Explorer.Choice(applyWeight, null, this::applyNext));
        }
        if (faults > 0 && !stream.isEmpty() && keys.stream().map(key -> LockKeys.of("lock:", key))
            .anyMatch(names -> holders(names).stream().anyMatch(token -> !has(applied, names, token)))) {
            choices.add(new Explorer.Choice(0.3 * faults, null, () -> {
                world.trace("aim: failover while the replica lacks a holder's lock");
                nemesis.failover();
            }));
        }
        choices.add(new Explorer.Choice(0.05 * faults, null, () -> {
            long nanos = (long) (random.nextDouble() * 2_000_000_000L);
            linkDownUntil = world.now() + nanos;
            world.trace(String.format(java.util.Locale.ROOT, "NEMESIS the replication link is cut for %.1f ms",
                    nanos / 1e6));
        }));
    }

    /**
     * The replica is promoted: the primary's writes it had not applied are lost (each one's {@code ifLost} runs: a
     * release or a withdrawal lost is excused as one a fault dropped), the server's clock is past every token handed out
     * before (a failover takes time; the docs ask that the new primary's clock not lag the old one's by more than
     * that), and a new replica is synchronized. Returns the keys whose holders or leases changed (a lost lock, a lost
     * renewal), of {@code keys}.
     */
    List<String> failover(List<String> keys) {
        world.trace("the replica is promoted; " + stream.size() + " writes it had not received are lost");
        List<String> before = new ArrayList<>();
        primary.failoverTookTime();
        keys.forEach(key -> before.add(holding(LockKeys.of("lock:", key))));
        for (String key : keys) {
            LockKeys names = LockKeys.of("lock:", key);
            holders(names).stream().filter(token -> !has(applied, names, token))
                .forEach(token -> lostHolders.add(new LostHolder(key, token, world.now())));
        }
        stream.forEach(write -> write.ifLost().run());
        primary.restore(applied);
        resynced();
        linkDownUntil = 0;
        List<String> changed = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            if (!before.get(i).equals(holding(LockKeys.of("lock:", keys.get(i))))) {
                changed.add(keys.get(i));
            }
        }
        return changed;
    }

    /** Who holds the key on the primary and until when, readers included (a failover that changes it lost a write). */
    private String holding(LockKeys keys) {
        return primary.lockValue(keys) + " for " + primary.leaseLeftMillis(keys) + " ms, readers "
                + ((java.util.Map<?, ?>) primary.copy().readers().get(0)).get(keys.readers());
    }

    /** The owner tokens that hold the key on the primary now: its writer's (not a queue grant nor a kept release), readers'. */
    private List<String> holders(LockKeys keys) {
        List<String> holders = new ArrayList<>(primary.liveReaders(keys));
        String value = primary.lockValue(keys);
        if (value != null && !value.startsWith("queue-grant:") && !value.startsWith("released:")) {
            int end = Math.max(value.lastIndexOf('@'), value.lastIndexOf('#'));
            holders.add(end < 0 ? value : value.substring(0, end));
        }
        return holders;
    }

    /** Whether {@code data} has the owner token's lock or read lease on the key, even one that ran out. */
    private static boolean has(SimRedis.Data data, LockKeys keys, String token) {
        Object value = ((java.util.Map<?, ?>) data.strings()).get(keys.lock());
        String text = value == null ? "" : SimStrings.text(value);
        if (text.startsWith(token) && (text.length() == token.length() || "@#".indexOf(text.charAt(token.length())) >= 0)) {
            return true;
        }
        java.util.Map<?, ?> zset = (java.util.Map<?, ?>) ((java.util.Map<?, ?>) data.readers().get(0)).get(keys.readers());
        return zset != null && zset.containsKey(token);
    }
}
