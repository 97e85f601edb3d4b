package dev.leasehold.engine.redis;

import java.util.Objects;

import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.server.LockServerException.Kind;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;

/** The failures of Spring Data Redis's template and listener container, whatever the client, in the engine's terms. */
final class TemplateErrors {

    private TemplateErrors() {
    }

    /**
     * Says what happened in the engine's terms: whether the command may still run decides a take-back.
     * Spring translates each client's errors into {@code DataAccessException}s; what they do not tell apart
     * (a connection that could not be opened, one that broke after the command was sent) is read from the
     * client's cause.
     */
    static LockServerException translate(Throwable ex) {
        Throwable cause = Objects.requireNonNullElse(LockServerException.unwrap(ex), ex);
        if (cause instanceof LockServerException own) {
            return own;
        }
        String message = String.valueOf(cause.getMessage());
        if (isErrorReply(cause)) {
            return new LockServerException(Kind.REFUSED, message, cause);
        }
        if (cause instanceof QueryTimeoutException || hasCause(cause, java.net.SocketTimeoutException.class)
                || cause instanceof java.util.concurrent.TimeoutException) {
            return new LockServerException(Kind.NO_REPLY, message, cause);
        }
        if (cause instanceof IllegalStateException) {
            // Spring Data Redis: the connection factory was stopped or destroyed (the application is shutting down)
            return new LockServerException(Kind.UNAVAILABLE,
                    "the Redis connection factory is not running (" + cause.getMessage() + ")", cause);
        }
        if (cause instanceof RedisConnectionFailureException && neverSent(cause)) {
            return new LockServerException(Kind.UNAVAILABLE, message, cause);
        }
        // a connection that broke after the command went out (reset, end of stream): it may have run
        return new LockServerException(Kind.NO_REPLY, message, cause);
    }

    /** An error reply from Redis (Jedis's or Lettuce's own exception type somewhere in the causes). */
    private static boolean isErrorReply(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            for (Class<?> type = cause.getClass(); type != null; type = type.getSuperclass()) {
                String name = type.getName();
                if (name.equals("redis.clients.jedis.exceptions.JedisDataException")
                        || name.equals("io.lettuce.core.RedisCommandExecutionException")) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** No connection could be opened (refused, unknown host, no pooled connection to borrow). */
    private static boolean neverSent(Throwable ex) {
        return hasCause(ex, java.net.ConnectException.class) || hasCause(ex, java.net.UnknownHostException.class)
                || hasCause(ex, java.net.NoRouteToHostException.class)
                || hasCause(ex, java.util.NoSuchElementException.class);
    }

    private static boolean hasCause(Throwable ex, Class<? extends Throwable> type) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }

    /** Redis answered NOSCRIPT: the script is not in its cache (first use, restart, failover, SCRIPT FLUSH). */
    static boolean isNoScript(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
                return true;
            }
        }
        return false;
    }
}
