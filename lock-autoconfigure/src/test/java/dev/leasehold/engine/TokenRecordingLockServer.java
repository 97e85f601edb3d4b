package dev.leasehold.engine;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;

/**
 * A real server that remembers the owner token of every grant by key and fencing token, so a test can
 * compare what a holder believes it holds with what a Redis node has under {@code lock:{key}}. Every call
 * goes to the real server unchanged.
 */
final class TokenRecordingLockServer extends ForwardingLockServer {

    private final Map<String, String> tokens = new ConcurrentHashMap<>();

    TokenRecordingLockServer(LockServer real) {
        super(real);
    }

    /** The owner token of the grant of {@code lockKey} that carried this fencing token, or null; forgets it. */
    String takeToken(String lockKey, long fencingToken) {
        return tokens.remove(lockKey + "#" + fencingToken);
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        return real.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId, queueTry).thenApply(grant -> {
            if (grant.granted()) {
                tokens.put(keys.lock() + "#" + grant.fencingToken(), token);
            }
            return grant;
        });
    }
}
