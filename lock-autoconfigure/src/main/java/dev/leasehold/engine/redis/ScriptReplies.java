package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.KeyState;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.FenceBlock;

import org.jspecify.annotations.Nullable;

/** Reads the scripts' replies the same way whichever client carried them (Lettuce, or a template). */
final class ScriptReplies {

    private ScriptReplies() {
    }

    /** acquire_*.lua: {1, token, last reserved token} or {0, ms to wait at most}. */
    static Grant toGrant(List<?> reply) {
        long status = (Long) reply.get(0);
        long value = (Long) reply.get(1);
        return status == 1L ? Grant.granted(value, reply.size() > 2 ? (Long) reply.get(2) : value)
                : Grant.refused(value);
    }

    /** reserve_fences.lua: {1, first, last, others queued} or {0} when the token no longer holds the key. */
    static @Nullable FenceBlock toFenceBlock(List<?> reply) {
        if ((Long) reply.get(0) != 1L) {
            return null;
        }
        return new FenceBlock((Long) reply.get(1), (Long) reply.get(2), (Long) reply.get(3) == 1L);
    }

    /** Reads inspect.lua's reply (texts arrive as bytes from Lettuce, as strings through a template). */
    static KeyState toKeyState(String key, List<?> reply) {
        long lockTtl = (Long) reply.get(0);
        long readers = (Long) reply.get(1);
        long readerLeft = (Long) reply.get(2);
        boolean writerWaiting = (Long) reply.get(3) > 0;
        String counterText = reply.size() > 4 ? text(reply.get(4)) : null;
        long counter = counterText != null ? Long.parseLong(counterText) : 0;
        List<String> holders = reply.size() > 5 ? texts(reply.get(5)) : List.of();
        List<KeyState.QueuedInstance> queue = reply.size() > 6
                ? texts(reply.get(6)).stream().map(KeyState.QueuedInstance::of).toList() : List.of();
        if (lockTtl != -2) {
            return new KeyState(key, true, LockMode.EXCLUSIVE, 0, Math.max(0, lockTtl), writerWaiting, counter,
                    holders, queue);
        }
        if (readers > 0) {
            return new KeyState(key, true, LockMode.READ, readers, readerLeft, writerWaiting, counter, holders, queue);
        }
        return new KeyState(key, false, null, 0, 0, writerWaiting, counter, List.of(), queue);
    }

    private static @Nullable String text(@Nullable Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8)
                : value instanceof String string ? string : null;
    }

    private static List<String> texts(Object value) {
        if (!(value instanceof List<?> list)) {
            return List.of();
        }
        return list.stream().map(ScriptReplies::text).filter(java.util.Objects::nonNull).toList();
    }

    /** The channel pattern an ACL user needs ({@code &<prefix>*}), for the hint in a warning. */
    static String channelPattern(LockKeys keys) {
        int tag = keys.lock().indexOf('{');
        return (tag >= 0 ? keys.lock().substring(0, tag) : "") + "*";
    }
}
