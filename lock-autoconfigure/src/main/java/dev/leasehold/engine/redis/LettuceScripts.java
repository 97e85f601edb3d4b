package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.leasehold.engine.redis.ScriptedLockServer.Reply;
import dev.leasehold.engine.server.LockServerException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

/** Scripts on Lettuce's asynchronous API, and Lettuce's failures in the engine's terms. */
final class LettuceScripts {

    private LettuceScripts() {
    }

    /**
     * EVALSHA, and EVAL when the server's script cache is empty (first use, restart, failover, SCRIPT FLUSH); the
     * future completes after the last command sent. Fails with a {@link LockServerException}.
     */
    static <T> CompletableFuture<T> eval(RedisClusterAsyncCommands<byte[], byte[]> commands, LockScript script,
            Reply reply, List<String> keys, List<String> args) {
        return eval(commands, script, reply, keys, args, null);
    }

    /** @param cached completed with whether the script was in the server's cache (no EVAL needed), when given */
    @SuppressWarnings("unchecked")
    static <T> CompletableFuture<T> eval(RedisClusterAsyncCommands<byte[], byte[]> commands, LockScript script,
            Reply reply, List<String> keys, List<String> args, @Nullable CompletableFuture<Boolean> cached) {
        ScriptOutputType type = reply == Reply.LIST ? ScriptOutputType.MULTI : ScriptOutputType.INTEGER;
        byte[][] keyBytes = recurringBytes(keys, Integer.MAX_VALUE);
        byte[][] argBytes = recurringBytes(args, RECURRING_ARGUMENT_LENGTH);
        CompletableFuture<T> sent;
        try {
            // dispatching may throw too (a connection whose client resources were shut down under it)
            sent = (CompletableFuture<T>) commands.evalsha(script.sha1(), type, keyBytes, argBytes).toCompletableFuture();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(translate(ex));
        }
        // one stage on the usual path (a reply), not one per kind of failure: every call of every step goes through it
        return sent.exceptionallyCompose(ex -> {
            if (!isNoScript(ex)) {
                return CompletableFuture.<T>failedFuture(translate(ex));
            }
            if (cached != null) {
                cached.complete(false);
            }
            CompletableFuture<T> fallback;
            try {
                fallback = (CompletableFuture<T>) commands.eval(script.body(), type, keyBytes, argBytes).toCompletableFuture();
            }
            catch (RuntimeException dispatch) {
                return CompletableFuture.<T>failedFuture(translate(dispatch));
            }
            return fallback.exceptionallyCompose(error -> CompletableFuture.<T>failedFuture(translate(error)));
        });
    }

    /** Says what happened in the engine's terms: whether the command may still run decides a take-back. */
    static LockServerException translate(Throwable ex) {
        Throwable cause = LockServerException.unwrap(ex);
        if (cause instanceof LockServerException own) {
            return own;
        }
        if (cause instanceof RedisCommandExecutionException) {
            return new LockServerException(LockServerException.Kind.REFUSED, String.valueOf(cause.getMessage()), cause);
        }
        if (cause instanceof RedisConnectionException) {
            return new LockServerException(LockServerException.Kind.UNAVAILABLE, String.valueOf(cause.getMessage()), cause);
        }
        if (cause instanceof IllegalStateException) {
            // Spring Data Redis: the connection factory was stopped or destroyed (the application is shutting down)
            return new LockServerException(LockServerException.Kind.UNAVAILABLE,
                    "the Redis connection factory is not running (" + cause.getMessage() + ")", cause);
        }
        return new LockServerException(LockServerException.Kind.NO_REPLY, String.valueOf(cause), cause);
    }

    static boolean isNoScript(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisNoScriptException
                    || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"))) {
                return true;
            }
        }
        return false;
    }

    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The encoded form of texts that come back call after call (key names, and short arguments: leases, flags,
     * the queue's figures), made once: they were a byte array per key and argument of every script call, a tenth of
     * the bytes an uncontended cycle allocates. Owner tokens and waiter ids, new every time, are longer than
     * {@link #RECURRING_ARGUMENT_LENGTH} and never kept. Forgotten wholesale past {@link #RECURRING_TEXTS}.
     */
    private static final Map<String, byte[]> RECURRING = new ConcurrentHashMap<>();

    static final int RECURRING_TEXTS = 4096;

    static final int RECURRING_ARGUMENT_LENGTH = 16;

    /** Lettuce only reads the arrays it is given (encoding them into its buffer), so one can serve every call. */
    private static byte[][] recurringBytes(List<String> values, int maxLength) {
        byte[][] result = new byte[values.size()][];
        for (int i = 0; i < result.length; i++) {
            String value = values.get(i);
            if (value.length() > maxLength) {
                result[i] = bytes(value);
                continue;
            }
            byte[] known = RECURRING.get(value);
            if (known == null) {
                if (RECURRING.size() >= RECURRING_TEXTS) {
                    RECURRING.clear();
                }
                known = bytes(value);
                RECURRING.put(value, known);
            }
            result[i] = known;
        }
        return result;
    }
}
