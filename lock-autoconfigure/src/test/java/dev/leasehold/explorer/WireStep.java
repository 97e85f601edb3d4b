package dev.leasehold.explorer;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.leasehold.engine.server.Grant;

/**
 * A step queued on a {@link SimWire}: what it does on the server, who waits for its reply, what a fault dropping it
 * leaves behind ({@link DroppedWrites}), and what its reply tells the engine about owner tokens' leases once delivered
 * ({@link #delivered}, for {@link RedisSaid}).
 */
final class WireStep {

    final String what;

    final Supplier<Object> onServer;

    final CompletableFuture<Object> reply = new CompletableFuture<>();

    Object result;

    /** The key whose queue entry this step writes (an acquire that joins the queue, a withdraw), or null. */
    String queueKey;

    boolean withdraw;

    /** An acquire's queue entry: '|W' or '|R'. */
    String entry = "|W";

    /** The owner token a release gives back, or null. */
    String releasedToken;

    /** What Redis says of these owner tokens' leases (acquire, reserve, renew): kind, keys and tokens, or null. */
    String kind;

    List<String> keys = List.of();

    List<String> tokens = List.of();

    long sentAt;

    /** When it ran on the server (virtual ns). */
    long ranAt;

    WireStep(String what, Supplier<Object> onServer) {
        this.what = what + (Thread.currentThread().getName().startsWith("main") ? "" : " [from " + Thread.currentThread().getName() + "]");
        this.onServer = onServer;
    }

    /** What the engine is told by this step's reply, delivered at {@code now} (before it completes: the engine may act on it at once). */
    void delivered(RedisSaid said, long now) {
        if (ReplicaAcks.unconfirmed(result)) {
            return; // with replica acknowledgement a write not acknowledged tells the engine only a failure
        }
        Object value = ReplicaAcks.value(result);
        if ("renew".equals(kind) && value instanceof List<?> renewed) {
            for (int i = 0; i < renewed.size(); i++) {
                said.renewalDelivered(keys.get(i), tokens.get(i), Boolean.TRUE.equals(renewed.get(i)), sentAt, now);
            }
        }
        else if (("renew".equals(kind) || "extend".equals(kind)) && value instanceof Boolean renewed) {
            said.renewalDelivered(keys.get(0), tokens.get(0), renewed, sentAt, now);
            if ("extend".equals(kind) && !renewed) {
                said.lastRefusalWasAnExtend();
            }
        }
        else if ("reserve".equals(kind) && value == null) {
            said.reservationGone(keys.get(0), tokens.get(0), sentAt, now);
        }
        else if ("release".equals(kind) && Boolean.FALSE.equals(result)) {
            said.releaseRefused(keys.get(0), tokens.get(0), sentAt, now);
        }
        else if ("release".equals(kind) && Boolean.TRUE.equals(result)) {
            said.releaseAccepted(keys.get(0), tokens.get(0), ranAt, now);
        }
    }

    /** A reply as the trace shows it. */
    static String describe(Object result) {
        if (result instanceof ReplicaAcks.Acked acked) {
            return describe(acked.value()) + ", acknowledged by " + acked.acknowledgements();
        }
        if (result instanceof Grant grant) {
            return grant.granted() ? "granted " + grant.fencingToken() + ".." + grant.reservedThrough()
                    : "refused " + grant.blockedForMillis() + " ms";
        }
        if (result instanceof RuntimeException ex) {
            return ex.getClass().getSimpleName() + ": " + ex.getMessage();
        }
        return String.valueOf(result);
    }
}
