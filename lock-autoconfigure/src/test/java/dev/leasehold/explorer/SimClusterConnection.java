package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.LockMode;
import dev.leasehold.engine.redis.RenewalBatchesBridge;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServerException;

/**
 * One engine's connection to a {@link SimCluster}, as {@code LettuceLockServer} is to a real one where the watchdog's
 * renewals are concerned: {@link #renewAll} is the production {@code RenewalBatches} (through
 * {@link RenewalBatchesBridge}), whose node calls (renew_exclusive_node.lua) and per-slot batches
 * (renew_exclusive_many.lua) are steps on this connection's wire, each sent to the master this client believes serves
 * its first key and run there by the explorer. A redirect is followed as Lettuce follows it, once its reply came back:
 * ASK with ASKING to the importing master, MOVED to the master it names (and the client learns that slot's master, as
 * a topology refresh after MOVED would), at most five redirections; TRYAGAIN fails the call. A renewal asked on its own
 * (a reader's, a lone lock's, or a lock a node call answered -2 for) and every other command run on the slots' data as
 * one server would (their one declared key, or one lock's keys, routed where they are: what Lettuce reaches following
 * redirections). What Redis told the engine about each lease is what {@code RenewalBatches} hands it, recorded before
 * the engine reads it ({@link RedisSaid}), and an answer "not held" for a lock the slots' data still holds for that
 * owner is kept for the checker ({@link ClusterRun}: S4).
 */
final class SimClusterConnection extends SimConnection {

    private static final int MAX_REDIRECTIONS = 5;

    private final ClusterRun run;

    /** Which master this client believes serves a slot, where it learnt otherwise than the even split. */
    private final Map<Integer, Integer> known = new HashMap<>();

    SimClusterConnection(String name, SimRedis redis, ClusterRun run) {
        super(name, redis);
        this.run = run;
    }

    /** The master this client believes serves {@code slot} (Lettuce's partitions). */
    synchronized int masterOf(int slot) {
        return known.getOrDefault(slot, SimCluster.initialMaster(slot, run.cluster.masters));
    }

    /** A topology refresh: the client learns every slot's master as the nodes say it. */
    synchronized void refreshTopology() {
        known.clear();
        known.putAll(run.cluster.handedOver());
    }

    private synchronized void learn(int slot, int master) {
        known.put(slot, master);
    }

    @Override
    public List<CompletableFuture<Boolean>> renewAll(List<Renewal> renewals) {
        long sentAt = redis.world.now();
        List<CompletableFuture<Boolean>> answers = RenewalBatchesBridge.renewAll(this::single, this::batch, this::onNode,
                renewals, this::masterOf);
        List<CompletableFuture<Boolean>> told = new ArrayList<>();
        for (int i = 0; i < renewals.size(); i++) {
            Renewal renewal = renewals.get(i);
            CompletableFuture<Boolean> toEngine = new CompletableFuture<>();
            answers.get(i).whenComplete((renewed, error) -> {
                if (error != null) {
                    toEngine.completeExceptionally(error);
                    return;
                }
                // what Redis told the engine, as it reads it: recorded first (the engine may act on it at once)
                said.renewalDelivered(renewal.keys().logicalKey(), renewal.token(), renewed, sentAt, redis.world.now());
                if (!renewed && renewal.mode() != LockMode.READ) {
                    run.answeredNotHeld(this, renewal.keys(), renewal.token());
                }
                toEngine.complete(renewed);
            });
            told.add(toEngine);
        }
        return told;
    }

    /** A renewal on its own (renew_exclusive.lua, or renew_shared.lua): where Redis routes its key, on its data. */
    private CompletableFuture<Boolean> single(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        boolean shared = mode == LockMode.READ;
        return send(name + " renew " + keys.logicalKey() + (shared ? " READ " : " ") + redis.world.tokenName(token),
                () -> redis.renew(keys, shared, token, leaseMillis));
    }

    /** renew_exclusive_node.lua, sent to the master this client believes serves {@code firstKey}. */
    private CompletableFuture<List<?>> onNode(String firstKey, List<String> args) {
        return call(masterOf(SimCluster.slot(firstKey)), false, List.of(firstKey), args, true, 0);
    }

    /** renew_exclusive_many.lua, its keys declared (one slot). */
    private CompletableFuture<List<?>> batch(List<String> lockKeys, List<String> args) {
        return call(masterOf(SimCluster.slot(lockKeys.get(0))), false, List.copyOf(lockKeys), List.copyOf(args), false, 0);
    }

    private CompletableFuture<List<?>> call(int node, boolean asking, List<String> declared, List<String> args,
            boolean onNode, int redirections) {
        CompletableFuture<Object> reply = send(describe(node, asking, declared, args, onNode), () -> onNode
                ? run.cluster.renewOnNode(node, asking, declared.get(0), args)
                : run.cluster.renewBatchOn(node, asking, declared, args));
        return reply.<List<?>>thenCompose(result -> {
            if (!(result instanceof SimCluster.Redirect redirect)) {
                return CompletableFuture.completedFuture((List<?>) result);
            }
            if (redirections >= MAX_REDIRECTIONS) {
                return CompletableFuture.<List<?>>failedFuture(new LockServerException(LockServerException.Kind.REFUSED,
                        "simulated: too many Cluster redirections", null));
            }
            if (!redirect.ask()) {
                learn(redirect.slot(), redirect.node());
            }
            return call(redirect.node(), redirect.ask(), declared, args, onNode, redirections + 1);
        });
    }

    /** The step as the trace shows it: "i0 renew-node m1 ASKING k0 t3, k7 t4". */
    private String describe(int node, boolean asking, List<String> declared, List<String> args, boolean onNode) {
        StringBuilder what = new StringBuilder(name + (onNode ? " renew-node m" : " renew-slot m") + node
                + (asking ? " ASKING" : ""));
        List<String> locks = new ArrayList<>();
        if (onNode) {
            locks.add(declared.get(0));
            locks.add(args.get(1));
            locks.addAll(args.subList(2, args.size()));
        }
        else {
            for (int i = 0; i < declared.size(); i++) {
                locks.add(declared.get(i));
                locks.add(args.get(i + 1));
            }
        }
        for (int i = 0; i + 1 < locks.size(); i += 2) {
            what.append(i == 0 ? " " : ", ").append(run.logicalKey(locks.get(i))).append(' ')
                .append(redis.world.tokenName(locks.get(i + 1)));
        }
        return what.toString();
    }
}
