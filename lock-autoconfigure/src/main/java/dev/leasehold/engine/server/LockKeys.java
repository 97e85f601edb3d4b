package dev.leasehold.engine.server;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The Redis names behind one logical key. They all share the hash tag {@code {logicalKey}}, so every
 * script touches a single Redis Cluster slot.
 * <p>
 * Redis Cluster takes the tag from the first {@code {} to the first {@code }} after it, so a logical key
 * that starts with {@code }} would give an empty tag (and the keys of one lock would land in different
 * slots). Such a key, and one that starts with the escape character {@code \}, gets a {@code \} in
 * front inside the tag: the tag is then never empty, and two different logical keys never share Redis
 * names. Every other key keeps the plain layout.
 * <p>
 * Every held lock keeps its names, so names made by {@link #of} keep only the lock's own name and derive the
 * others (its name plus a suffix) when asked: a hundred thousand held locks would otherwise hold six hundred
 * thousand more strings (about 450 bytes per lock). Equal when all names are equal, as the record it was.
 */
public final class LockKeys {

    private static final String READERS = ":readers";

    private static final String WRITER_WAITING = ":writer-waiting";

    private static final String FENCE = ":fence";

    private static final String CHANNEL = ":released";

    private static final String QUEUE = ":queue";

    private static final String QUEUE_EXPIRY = ":queue-expiry";

    private final String logicalKey;

    private final String lock;

    /** The key prefix {@link #of} was given (the same instance on every call of one engine), or null. */
    private final @Nullable String keyPrefix;

    /** Null when every other name is {@link #lock} plus its suffix; else readers .. queueExpiry as given. */
    private final String @Nullable [] given;

    /**
     * The derived names, made once while these names are among an engine's recent keys ({@link #keepNames}): a key
     * locked again and again then builds no string per call. Forgotten when they leave ({@link #forgetNames}), so
     * that held locks stay small.
     */
    private volatile String @Nullable [] derived;

    public LockKeys(String logicalKey, String lock, String readers, String writerWaiting, String fence,
            String channel, String queue, String queueExpiry) {
        this.logicalKey = logicalKey;
        this.lock = lock;
        this.keyPrefix = null;
        String[] names = { readers, writerWaiting, fence, channel, queue, queueExpiry };
        String[] suffixes = { READERS, WRITER_WAITING, FENCE, CHANNEL, QUEUE, QUEUE_EXPIRY };
        boolean derived = lock != null;
        for (int i = 0; i < names.length && derived; i++) {
            derived = (lock + suffixes[i]).equals(names[i]);
        }
        this.given = derived ? null : names;
    }

    private LockKeys(String logicalKey, String lock, String keyPrefix) {
        this.logicalKey = logicalKey;
        this.lock = lock;
        this.keyPrefix = keyPrefix;
        this.given = null;
    }

    public static LockKeys of(String keyPrefix, String logicalKey) {
        return new LockKeys(logicalKey, keyPrefix + "{" + hashTagContent(logicalKey) + "}", keyPrefix);
    }

    /**
     * The key prefix these names were made with by {@link #of} (a server keeps what it derives from it, such as
     * the liveness prefix, for as long as the same prefix comes back), or null when the names were given.
     */
    public @Nullable String keyPrefix() {
        return keyPrefix;
    }

    /**
     * The prefix of the waiting instances' liveness keys ({@code <key prefix>instance:<instance id>}, fair queue on
     * one server, see {@code queue.lua}): outside every lock's names, which all carry a hash tag.
     */
    public static String instancePrefix(String keyPrefix) {
        return keyPrefix + "instance:";
    }

    /** {@link #instancePrefix(String)} of the key prefix these names were made with (names given: derived from the lock's). */
    public String instancePrefix() {
        if (keyPrefix != null) {
            return instancePrefix(keyPrefix);
        }
        String tag = "{" + hashTagContent(logicalKey) + "}";
        return instancePrefix(given == null && lock.endsWith(tag) ? lock.substring(0, lock.length() - tag.length())
                : lock + ":");
    }

    static String hashTagContent(String logicalKey) {
        return logicalKey.startsWith("}") || logicalKey.startsWith("\\") ? "\\" + logicalKey : logicalKey;
    }

    public String logicalKey() {
        return logicalKey;
    }

    public String lock() {
        return lock;
    }

    public String readers() {
        return name(0, READERS);
    }

    public String writerWaiting() {
        return name(1, WRITER_WAITING);
    }

    public String fence() {
        return name(2, FENCE);
    }

    public String channel() {
        return name(3, CHANNEL);
    }

    public String queue() {
        return name(4, QUEUE);
    }

    public String queueExpiry() {
        return name(5, QUEUE_EXPIRY);
    }

    private String name(int index, String suffix) {
        if (given != null) {
            return given[index];
        }
        String[] names = derived;
        return names != null ? names[index] : lock + suffix;
    }

    /** Keeps the derived names from now on (see {@link #derived}). */
    public void keepNames() {
        if (given == null) {
            derived = new String[] { lock + READERS, lock + WRITER_WAITING, lock + FENCE, lock + CHANNEL, lock + QUEUE,
                lock + QUEUE_EXPIRY };
        }
    }

    /** Derives the names on each request again (see {@link #derived}). */
    public void forgetNames() {
        derived = null;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LockKeys keys && Objects.equals(logicalKey, keys.logicalKey) && Objects.equals(lock, keys.lock)
                && Objects.equals(readers(), keys.readers()) && Objects.equals(writerWaiting(), keys.writerWaiting())
                && Objects.equals(fence(), keys.fence()) && Objects.equals(channel(), keys.channel())
                && Objects.equals(queue(), keys.queue()) && Objects.equals(queueExpiry(), keys.queueExpiry());
    }

    @Override
    public int hashCode() {
        return Objects.hash(logicalKey, lock);
    }

    @Override
    public String toString() {
        return "LockKeys[logicalKey=" + logicalKey + ", lock=" + lock + ", readers=" + readers() + ", writerWaiting="
                + writerWaiting() + ", fence=" + fence() + ", channel=" + channel() + ", queue=" + queue()
                + ", queueExpiry=" + queueExpiry() + "]";
    }
}
