package dev.leasehold.engine.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServer.Renewal;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * A watchdog tick's renewals on one Redis server, in as few script calls as the server allows: the exclusive
 * ones in batches of up to {@link #BATCH} keys per call ({@code renew_exclusive_many.lua}, compare-then-extend
 * per key, one lease argument per call), grouped per lease and, on a Cluster, per slot (a script's keys must share
 * one); a shared (read) lease is
 * renewed on its own. With replica acknowledgement, one {@code WAIT} follows each batch and covers it all.
 */
final class RenewalBatches {

    /** Keys per script call: big enough that 100,000 held locks cost 100 calls a tick, small enough that one call stays short. */
    static final int BATCH = 1000;

    private RenewalBatches() {
    }

    /**
     * @param perSlot whether every batch must stay within one Cluster slot (asked only when there is more than one
     * exclusive lease to renew: a server may need a connection to tell)
     */
    /** One call of {@code renew_exclusive_many.lua}: a 1 or 0 per key, in order. */
    interface BatchCall {
        CompletableFuture<List<?>> renew(List<String> keys, List<String> args);
    }

    /**
     * @param server renews a single lease (a reader, or a batch of one)
     * @param batchCall renews a batch
     */
    static List<CompletableFuture<Boolean>> renewAll(LockServer server, BatchCall batchCall, List<Renewal> renewals,
            BooleanSupplier perSlot) {
        long exclusive = renewals.stream().filter(renewal -> renewal.mode() != LockMode.READ).count();
        if (exclusive <= 1) {
            List<CompletableFuture<Boolean>> answers = new ArrayList<>(renewals.size());
            for (Renewal renewal : renewals) {
                answers.add(server.renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis()));
            }
            return answers;
        }
        boolean bySlot = perSlot.getAsBoolean();
        @SuppressWarnings("unchecked")
        CompletableFuture<Boolean>[] answers = new CompletableFuture[renewals.size()];
        Map<Group, Indexes> groups = new LinkedHashMap<>();
        Group last = null;
        Indexes lastIndexes = null;
        for (int i = 0; i < renewals.size(); i++) {
            Renewal renewal = renewals.get(i);
            if (renewal.mode() == LockMode.READ) {
                answers[i] = server.renew(renewal.keys(), renewal.mode(), renewal.token(), renewal.leaseMillis());
                continue;
            }
            // one lease per call (the leases of a tick are alike: the configured lease time); consecutive
            // renewals of one group skip the lookup (a tick of a million locks off a Cluster is one group)
            int slot = bySlot ? ClusterSlotHashUtil.calculateSlot(renewal.keys().lock()) : 0;
            if (last == null || last.slot() != slot || last.leaseMillis() != renewal.leaseMillis()) {
                last = new Group(slot, renewal.leaseMillis());
                lastIndexes = groups.computeIfAbsent(last, each -> new Indexes());
            }
            lastIndexes.add(i);
        }
        for (Indexes group : groups.values()) {
            for (int from = 0; from < group.size; from += BATCH) {
                int to = Math.min(group.size, from + BATCH);
                List<Renewal> batch = new ArrayList<>(to - from);
                for (int j = from; j < to; j++) {
                    batch.add(renewals.get(group.at[j]));
                }
                List<CompletableFuture<Boolean>> renewed = renewBatch(server, batchCall, batch);
                for (int j = from; j < to; j++) {
                    answers[group.at[j]] = renewed.get(j - from);
                }
            }
        }
        return Arrays.asList(answers);
    }

    /** Renewals that may share a call: the same Cluster slot (0 off a Cluster) and the same lease. */
    private record Group(int slot, long leaseMillis) {
    }

    /** The positions of one group's renewals in the tick's list, unboxed (a million per tick). */
    private static final class Indexes {

        int[] at = new int[16];

        int size;

        void add(int index) {
            if (size == at.length) {
                at = Arrays.copyOf(at, size * 2);
            }
            at[size++] = index;
        }
    }

    private static List<CompletableFuture<Boolean>> renewBatch(LockServer server, BatchCall batchCall,
            List<Renewal> batch) {
        if (batch.size() == 1) {
            Renewal only = batch.get(0);
            return List.of(server.renew(only.keys(), only.mode(), only.token(), only.leaseMillis()));
        }
        List<String> keys = new ArrayList<>(batch.size());
        List<String> args = new ArrayList<>(batch.size() + 1);
        args.add(Long.toString(batch.get(0).leaseMillis())); // one lease for the whole call (grouped so)
        for (Renewal renewal : batch) {
            keys.add(renewal.keys().lock());
            args.add(renewal.token());
        }
        CompletableFuture<List<?>> replies = batchCall.renew(keys, args);
        // the answers are completed from the batch's reply in one pass (not one dependent stage per key): a tick's
        // objects stay live until Redis answers, a hundred thousand of them at once
        List<CompletableFuture<Boolean>> answers = new ArrayList<>(batch.size());
        for (int j = 0; j < batch.size(); j++) {
            answers.add(new CompletableFuture<>());
        }
        replies.whenComplete((reply, error) -> {
            for (int j = 0; j < answers.size(); j++) {
                try {
                    if (error != null) {
                        answers.get(j).completeExceptionally(error);
                    }
                    else {
                        answers.get(j).complete(((Number) reply.get(j)).longValue() == 1L);
                    }
                }
                catch (RuntimeException ex) {
                    answers.get(j).completeExceptionally(ex); // a reply too short or of another kind: this key's answer
                }
            }
        });
        return answers;
    }
}
