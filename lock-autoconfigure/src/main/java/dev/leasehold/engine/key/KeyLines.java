package dev.leasehold.engine.key;

import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The {@link KeyLine} of every key this JVM uses now: a line exists while an acquisition waits for the key or a
 * lock of it is held, and goes when the last of them leaves.
 */
public final class KeyLines {

    private final ConcurrentHashMap<String, KeyLine> lines = new ConcurrentHashMap<>();

    private final HandOffRules rules;

    private volatile boolean closed;

    public KeyLines(HandOffRules rules) {
        this.rules = rules;
    }

    /** Joins the key's line (made if needed); every join is matched by one {@link #leave}. */
    public KeyLine join(String key) {
        KeyLine joined = lines.compute(key, (k, existing) -> {
            KeyLine line = existing != null ? existing : new KeyLine(k, rules);
            line.users++;
            return line;
        });
        if (closed) {
            joined.close(); // joined while shutdown began: its waiters get the turn at once, and give up
        }
        return joined;
    }

    public void leave(KeyLine line) {
        lines.computeIfPresent(line.key(), (k, current) -> current == line && --current.users == 0 ? null : current);
    }

    /** The line a held lock of {@code key} joined (null only when none: never for a lock not yet released). */
    public @Nullable KeyLine line(String key) {
        return lines.get(key);
    }

    public int size() {
        return lines.size();
    }

    /** Acquisitions queued behind the one whose turn it is, over all keys (diagnostics and tests). */
    public int queued() {
        int queued = 0;
        for (KeyLine line : lines.values()) {
            queued += line.queued();
        }
        return queued;
    }

    /** Shutdown: every line closes, and so does every line joined later. */
    public void closeAll() {
        closed = true;
        lines.values().forEach(KeyLine::close);
    }
}
