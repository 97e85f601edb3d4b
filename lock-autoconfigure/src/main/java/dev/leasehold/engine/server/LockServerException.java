package dev.leasehold.engine.server;

import org.jspecify.annotations.Nullable;

/**
 * A per-server step that did not complete, said in terms the engine can act on and a user can read: whether
 * the step may still have run on the server decides whether the engine must take an acquire back.
 */
public class LockServerException extends RuntimeException {

    public enum Kind {
        /** No reply in time (a timeout, a connection reset): the step may or may not have run. */
        NO_REPLY("Redis did not answer"),
        /** Redis answered with an error (an ACL refusal, CROSSSLOT, a script error): the step did not run. */
        REFUSED("Redis refused the command"),
        /** No connection could be used (the connection factory is stopped or closed, or cannot connect). */
        UNAVAILABLE("Redis could not be reached");

        private final String summary;

        Kind(String summary) {
            this.summary = summary;
        }

        public String summary() {
            return summary;
        }
    }

    private final Kind kind;

    public LockServerException(Kind kind, String message, @Nullable Throwable cause) {
        super(kind.summary() + ": " + message, cause);
        this.kind = kind;
    }

    /** Whether an acquire that answered {@code grant} or failed with {@code error} certainly granted nothing. */
    public static boolean refusedForSure(Grant grant, Throwable error) {
        if (grant != null) {
            return !grant.granted();
        }
        return unwrap(error) instanceof LockServerException failure && failure.kind() == Kind.REFUSED;
    }

    /** The failure inside the wrappers of futures ({@code CompletionException}, {@code ExecutionException}). */
    public static @Nullable Throwable unwrap(@Nullable Throwable ex) {
        Throwable cause = ex;
        while ((cause instanceof java.util.concurrent.CompletionException
                || cause instanceof java.util.concurrent.ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /**
     * Whether Redis answered {@code TRYAGAIN}: a Cluster slot in the middle of a migration refuses a script whose
     * keys are split between its two masters, or partly missing on either (see {@code ScriptedLockServer}).
     */
    public static boolean isTryAgain(@Nullable Throwable error) {
        if (!(unwrap(error) instanceof LockServerException failure) || failure.kind() != Kind.REFUSED) {
            return false;
        }
        // Redis's error text begins with its code ("TRYAGAIN Multiple keys request during rehashing of slot"), in the
        // client's exception, which Spring's translation may wrap in one of its own ("Error in execution")
        for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null && cause.getMessage().startsWith("TRYAGAIN")) {
                return true;
            }
        }
        return false;
    }

    /** What went wrong with a step, for a message a user reads. */
    public static @Nullable String describe(@Nullable Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockServerException) {
            return cause.getMessage();
        }
        return "Redis call failed (" + cause + ")";
    }

    public Kind kind() {
        return kind;
    }
}
