package dev.leasehold.explorer;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.server.LockServerException;

/**
 * Replica acknowledgement ({@code leasehold.replica-ack.replicas=1}) as the engine sees it, the rules of
 * {@code ScriptedLockServer} over {@code AcknowledgedWrites}: each write script is followed by its {@code WAIT} in the
 * same step (pipelined on the same connection: one round trip), and its reply carries how many replicas acknowledged.
 * A grant not acknowledged is taken back (a release, on the same connection) and, once that release answered, fails
 * as refused; a renewal, a batch of renewals or a token reservation that took effect and was not acknowledged fails as
 * refused (the watchdog retries; a reservation ends the hand-off); a refusal counts as it is. Releases are not
 * acknowledged. What the engine sees is the contract: these messages and kinds are the production ones.
 */
final class ReplicaAcks {

    static final int REPLICAS = 1;

    /** A script's reply and how many replicas acknowledged it ({@code ScriptedLockServer.Acknowledged}). */
    record Acked(Object value, long acknowledgements) {
    }

    private ReplicaAcks() {
    }

    /** The script, then WAIT, in one step on the server. */
    static Supplier<Object> withWait(Supplier<Object> script, SimReplica replica) {
        return () -> {
            Object value = script.get();
            return new Acked(value, replica.await());
        };
    }

    /** The script's own reply. */
    static Object value(Object result) {
        return result instanceof Acked acked ? acked.value() : result;
    }

    /** Whether the engine gets a failure for this reply: a write that took effect and was not acknowledged. */
    static boolean unconfirmed(Object result) {
        if (!(result instanceof Acked acked) || acked.acknowledgements() >= REPLICAS) {
            return false;
        }
        Object value = acked.value();
        return value instanceof Grant grant ? grant.granted()
                : value instanceof FenceBlock || Boolean.TRUE.equals(value)
                        || value instanceof List<?> renewed && renewed.contains(Boolean.TRUE);
    }

    /** An acquire's reply: a grant not acknowledged is taken back by {@code takeBack}, then fails as refused. */
    static CompletableFuture<Grant> grant(CompletableFuture<Object> reply,
            Supplier<CompletableFuture<Boolean>> takeBack) {
        return reply.thenCompose(result -> {
            if (!unconfirmed(result)) {
                return CompletableFuture.completedFuture((Grant) value(result));
            }
            // not on enough replicas: a failover could lose it, so it does not count; take it back first
            return takeBack.get().handle((released, error) -> {
                throw notAcknowledged("grant", (Acked) result);
            });
        });
    }

    /** A renewal's, a batch's or a reservation's reply: one that took effect and was not acknowledged fails. */
    @SuppressWarnings("unchecked")
    static <T> CompletableFuture<T> confirmed(CompletableFuture<Object> reply, String what) {
        return reply.thenApply(result -> {
            if (unconfirmed(result)) {
                throw notAcknowledged(what, (Acked) result);
            }
            return (T) value(result);
        });
    }

    private static LockServerException notAcknowledged(String what, Acked acked) {
        return new LockServerException(LockServerException.Kind.REFUSED, "the " + what + " was acknowledged by "
                + acked.acknowledgements() + " of the " + REPLICAS + " replicas that leasehold.replica-ack.replicas"
                + " asks for within leasehold.replica-ack.timeout (simulated)", null);
    }
}
