package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntUnaryOperator;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.Renewal;

/**
 * The explorer's way to the real {@link RenewalBatches} (package-private, below the {@code LockServer} seam): its
 * simulated Cluster ({@code dev.leasehold.explorer.SimClusterConnection}) runs the production batching, rounds and
 * fall-backs unchanged over simulated script calls, and its match test runs the production scripts' text on a real
 * Cluster. Test code only: the production classes stay package-private.
 */
public final class RenewalBatchesBridge {

    private RenewalBatchesBridge() {
    }

    /** One lease renewed on its own ({@code renew_exclusive.lua}, or renew_shared for a reader), where Redis routes its key. */
    public interface Single {
        CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis);
    }

    /** {@code renew_exclusive_many.lua} with its keys declared (one slot): a 1 or 0 per key. */
    public interface Batch {
        CompletableFuture<List<?>> renew(List<String> keys, List<String> args);
    }

    /** {@code renew_exclusive_node.lua} on the node that serves {@code firstKey}: a 1, 0, -1 or -2 per lock. */
    public interface Node {
        CompletableFuture<List<?>> renew(String firstKey, List<String> args);
    }

    /**
     * {@link RenewalBatches#renewAll} on a Cluster without replica acknowledgement, as {@code ScriptedLockServer} calls
     * it: {@code masters} is which master the client believes serves each slot.
     */
    public static List<CompletableFuture<Boolean>> renewAll(Single single, Batch batch, Node node, List<Renewal> renewals,
            IntUnaryOperator masters) {
        return RenewalBatches.renewAll(
                renewal -> single.renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis()),
                batch::renew, node::renew, renewals, () -> true, () -> masters);
    }

    /** The text of {@code renew_exclusive_node.lua} as the server runs it (owner.lua in front). */
    public static String renewOnNodeScript() {
        return new String(LockScript.RENEW_EXCLUSIVE_NODE.body(), StandardCharsets.UTF_8);
    }

    /** The text of {@code renew_exclusive_many.lua} as the server runs it (owner.lua in front). */
    public static String renewManyScript() {
        return new String(LockScript.RENEW_EXCLUSIVE_MANY.body(), StandardCharsets.UTF_8);
    }
}
