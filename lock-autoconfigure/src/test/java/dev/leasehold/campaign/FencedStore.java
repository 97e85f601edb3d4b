package dev.leasehold.campaign;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The resource a lock guards, with the fencing check a user would write there: a read or a write with a
 * token lower than the highest the store has seen for the key is refused. Each section reads at its start
 * and writes at its end, so a holder that is still inside after a newer holder read is refused.
 */
public final class FencedStore {

    private final Map<String, Long> highest = new ConcurrentHashMap<>();

    /** Whether a read with {@code token} is accepted (it raises the key's fence). */
    public boolean read(String key, long token) {
        return admit(key, token);
    }

    /** Whether a write with {@code token} is accepted. */
    public boolean write(String key, long token) {
        return admit(key, token);
    }

    private boolean admit(String key, long token) {
        boolean[] accepted = new boolean[1];
        highest.compute(key, (k, seen) -> {
            accepted[0] = seen == null || token >= seen;
            return accepted[0] ? token : seen;
        });
        return accepted[0];
    }
}
