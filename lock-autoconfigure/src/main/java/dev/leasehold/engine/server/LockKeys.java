package dev.leasehold.engine.server;

/**
 * The Redis names behind one logical key. They all share the hash tag {@code {logicalKey}}, so every
 * script touches a single Redis Cluster slot.
 * <p>
 * Redis Cluster takes the tag from the first {@code {} to the first {@code }} after it, so a logical key
 * that starts with {@code }} would give an empty tag (and the keys of one lock would land in different
 * slots). Such a key, and one that starts with the escape character {@code \}, gets a {@code \} in
 * front inside the tag: the tag is then never empty, and two different logical keys never share Redis
 * names. Every other key keeps the plain layout.
 */
public record LockKeys(String logicalKey, String lock, String readers, String writerWaiting, String fence,
        String channel, String queue, String queueExpiry) {

    public static LockKeys of(String keyPrefix, String logicalKey) {
        String base = keyPrefix + "{" + hashTagContent(logicalKey) + "}";
        return new LockKeys(logicalKey, base, base + ":readers", base + ":writer-waiting", base + ":fence",
                base + ":released", base + ":queue", base + ":queue-expiry");
    }

    static String hashTagContent(String logicalKey) {
        return logicalKey.startsWith("}") || logicalKey.startsWith("\\") ? "\\" + logicalKey : logicalKey;
    }
}
