package dev.leasehold.engine;

/**
 * The Redis names behind one logical key. They all share the hash tag {@code {logicalKey}}, so every
 * script touches a single Redis Cluster slot.
 */
public record LockKeys(String logicalKey, String lock, String readers, String writerWaiting, String fence,
        String channel) {

    public static LockKeys of(String keyPrefix, String logicalKey) {
        String base = keyPrefix + "{" + logicalKey + "}";
        return new LockKeys(logicalKey, base, base + ":readers", base + ":writer-waiting", base + ":fence",
                base + ":released");
    }
}
