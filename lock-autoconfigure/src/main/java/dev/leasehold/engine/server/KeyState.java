package dev.leasehold.engine.server;

import dev.leasehold.LockMode;

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
 * next grant is higher), 0 when Redis has none (on one server
 * the counter expires a minute after the last lease; in quorum mode it never expires, and this is the
 * highest of the nodes'); the next grant is higher
 */
public record KeyState(String key, boolean held, LockMode mode, long readers, long leaseLeftMillis,
        boolean writerWaiting, long fencingCounter) {
}
