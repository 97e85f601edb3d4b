package dev.leasehold.engine.server;

import java.util.List;

import dev.leasehold.LockMode;

import org.jspecify.annotations.Nullable;

/**
 * What Redis says about one logical key now, read without changing anything (for diagnostics: the
 * actuator endpoint). It never carries an owner token: a token would let its reader release someone
 * else's lock.
 * @param key the logical key
 * @param held whether anyone holds it now, in any mode
 * @param mode {@link LockMode#EXCLUSIVE} when an exclusive (or write: the same lock) owner holds it,
 * {@link LockMode#READ} when readers hold it, null when free
 * @param readers readers holding it now
 * @param leaseLeftMillis lease left of the exclusive owner, or of the longest reader lease; 0 when free
 * @param writerWaiting whether a writer waits (queued, or marked waiting for the readers): new readers are
 * kept out meanwhile
 * @param fencingCounter the last fencing token granted or reserved for local hand-offs on the key (the
 * next grant is higher), 0 when Redis keeps none (on one server a key at rest keeps none: its tokens are
 * below the server clock, which every new token is above; in quorum mode the counter is kept, for ever or
 * for the retention, and this is the highest of the nodes')
 * @param holders the instances holding it now (instance ids, as {@code /actuator/leasehold} shows its own):
 * the exclusive holder, or every instance with a reader; also an instance the fair queue granted the key
 * that has not claimed it yet. In quorum mode, those that hold it on a majority of the nodes
 * @param queue the instances waiting for it in Redis's fair queue, first come first: the next to get it
 * first (one entry per instance however many of its threads wait; they take local turns). Empty on
 * servers without the queue (quorum mode)
 */
public record KeyState(String key, boolean held, @Nullable LockMode mode, long readers, long leaseLeftMillis,
        boolean writerWaiting, long fencingCounter, List<String> holders, List<QueuedInstance> queue) {

    public KeyState {
        holders = holders == null ? List.of() : List.copyOf(holders);
        queue = queue == null ? List.of() : List.copyOf(queue);
    }

    /** Without holders and queue. */
    public KeyState(String key, boolean held, LockMode mode, long readers, long leaseLeftMillis,
            boolean writerWaiting, long fencingCounter) {
        this(key, held, mode, readers, leaseLeftMillis, writerWaiting, fencingCounter, List.of(), List.of());
    }

    /**
     * One instance in the key's fair queue.
     * @param instance its instance id
     * @param mode {@link LockMode#EXCLUSIVE} for a writer (exclusive or write lock), {@link LockMode#READ}
     * for readers
     */
    public record QueuedInstance(String instance, LockMode mode) {

        /** From a queue entry, {@code <instance id>|W} or {@code <instance id>|R}. */
        public static QueuedInstance of(String member) {
            boolean reader = member.endsWith("|R");
            String instance = member.endsWith("|R") || member.endsWith("|W")
                    ? member.substring(0, member.length() - 2) : member;
            return new QueuedInstance(instance, reader ? LockMode.READ : LockMode.EXCLUSIVE);
        }
    }
}
