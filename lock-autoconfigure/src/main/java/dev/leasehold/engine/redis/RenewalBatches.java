package dev.leasehold.engine.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

import dev.leasehold.LockMode;
import dev.leasehold.engine.server.LockServer.Renewal;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * A watchdog tick's renewals on one Redis server, in as few script calls as the server allows: the exclusive
 * ones in batches of up to {@link #BATCH} keys per call, compare-then-extend per key, one lease argument per call.
 * On one server a batch is {@code renew_exclusive_many.lua}. On a Cluster it is {@code renew_exclusive_node.lua},
 * sent to the node of its first lock, which renews the locks it serves and answers -1 for the others; those go
 * again, to the node of the first of them, until every lock was answered where it lives (one round per master
 * the batch touches). A further lock the node found absent is asked about on its own (a migration's ASK may have
 * sent the call where it has not moved yet), so only its own key's answer reports it lost. Where the client knows which master serves a slot, a batch holds one master's locks, so
 * it takes one round unless a slot moved since. A batch whose call fails is sent again per slot ({@code renew_exclusive_many.lua} with
 * declared keys), so a master that is down fails only its own locks. A shared (read) lease is renewed on its own.
 * With replica acknowledgement, batches stay per slot and one {@code WAIT} follows each, covering it all.
 */
final class RenewalBatches {

    /** Keys per script call: big enough that 100,000 held locks cost 100 calls a tick, small enough that one call stays short. */
    static final int BATCH = 1000;

    /**
     * Rounds of a Cluster batch before what is left goes per slot: a round answers at least its first lock, and
     * on a stable Cluster every lock a master serves, so a batch takes as many rounds as the masters it touches.
     */
    static final int MAX_ROUNDS = 32;

    /**
     * A further lock of a node call (not its declared key) that the node found absent: not a loss yet, since a call
     * that came with ASKING reads the keys of the migrating slot that have not moved yet as absent.
     */
    static final long ABSENT_HERE = -2L;

    private RenewalBatches() {
    }

    /** One lease renewed on its own, where the client routes its key ({@code LockServer.renew}). */
    interface SingleCall {
        CompletableFuture<Boolean> renew(Renewal renewal);
    }

    /** One call of {@code renew_exclusive_many.lua} (keys of one slot on a Cluster): a 1 or 0 per key, in order. */
    interface BatchCall {
        CompletableFuture<List<?>> renew(List<String> keys, List<String> args);
    }

    /**
     * One call of {@code renew_exclusive_node.lua} on the node that serves {@code firstKey}: a 1, 0, -1 (not
     * served here) or -2 (a further lock absent here) per lock, in order; {@code args} are the lease, the first lock's token, then lock and token pairs.
     */
    interface NodeCall {
        CompletableFuture<List<?>> renew(String firstKey, List<String> args);
    }

    /**
     * @param single renews a single lease (a reader, or a batch of one)
     * @param batchCall renews a batch of keys that share a slot (or any keys off a Cluster)
     * @param nodeCall renews a batch across slots on a Cluster; null to keep every batch within one slot
     * @param perSlot whether batches must stay within one Cluster slot (asked only when there is more than one
     * exclusive lease to renew: a server may need a connection to tell)
     * @param masters which master the client believes serves a slot, as a small number per master (asked on a
     * Cluster with {@code nodeCall}); null when the client does not know
     */
    static List<CompletableFuture<Boolean>> renewAll(SingleCall single, BatchCall batchCall, @Nullable NodeCall nodeCall,
            List<Renewal> renewals, BooleanSupplier perSlot, Supplier<IntUnaryOperator> masters) {
        long exclusive = renewals.stream().filter(renewal -> renewal.mode() != LockMode.READ).count();
        if (exclusive <= 1) {
            List<CompletableFuture<Boolean>> answers = new ArrayList<>(renewals.size());
            for (Renewal renewal : renewals) {
                answers.add(single.renew(renewal));
            }
            return answers;
        }
        boolean clustered = perSlot.getAsBoolean();
        if (clustered && nodeCall != null) {
            return grouped(single, renewals, masters.get(), batch -> acrossSlots(single, batchCall, nodeCall, batch, 1));
        }
        return grouped(single, renewals, clustered ? SAME_SLOT : null, batch -> renewBatch(single, batchCall, batch));
    }

    /** Batches per slot: a slot is its own place. */
    private static final IntUnaryOperator SAME_SLOT = slot -> slot;

    /**
     * The renewals in batches of one lease and one place, each sent by {@code send}.
     * @param placeOfSlot the place (a number) of each Cluster slot's keys; null: all in one place
     */
    private static List<CompletableFuture<Boolean>> grouped(SingleCall single, List<Renewal> renewals,
            @Nullable IntUnaryOperator placeOfSlot, Function<List<Renewal>, List<CompletableFuture<Boolean>>> send) {
        @SuppressWarnings("unchecked")
        CompletableFuture<Boolean>[] answers = new CompletableFuture[renewals.size()];
        Map<Group, Indexes> groups = new LinkedHashMap<>();
        Group last = null;
        Indexes lastIndexes = null;
        for (int i = 0; i < renewals.size(); i++) {
            Renewal renewal = renewals.get(i);
            if (renewal.mode() == LockMode.READ) {
                answers[i] = single.renew(renewal);
                continue;
            }
            // one lease per call (the leases of a tick are alike: the configured lease time); consecutive
            // renewals of one group skip the lookup (a tick of a million locks off a Cluster is one group)
            int place = placeOfSlot == null ? 0 : placeOfSlot.applyAsInt(ClusterSlotHashUtil.calculateSlot(renewal.keys().lock()));
            if (last == null || last.place() != place || last.leaseMillis() != renewal.leaseMillis()) {
                last = new Group(place, renewal.leaseMillis());
                lastIndexes = groups.computeIfAbsent(last, each -> new Indexes());
            }
            Objects.requireNonNull(lastIndexes, "set with last").add(i);
        }
        for (Indexes group : groups.values()) {
            for (int from = 0; from < group.size; from += BATCH) {
                int to = Math.min(group.size, from + BATCH);
                List<Renewal> batch = new ArrayList<>(to - from);
                for (int j = from; j < to; j++) {
                    batch.add(renewals.get(group.at[j]));
                }
                List<CompletableFuture<Boolean>> renewed = send.apply(batch);
                for (int j = from; j < to; j++) {
                    answers[group.at[j]] = renewed.get(j - from);
                }
            }
        }
        return Arrays.asList(answers);
    }

    /**
     * One round of a Cluster batch on the node of its first lock; the locks answered -1 go in the next round, and a
     * call that fails goes again per slot.
     */
    private static List<CompletableFuture<Boolean>> acrossSlots(SingleCall single, BatchCall batchCall,
            NodeCall nodeCall, List<Renewal> batch, int round) {
        if (batch.size() == 1) {
            return List.of(single.renew(batch.get(0)));
        }
        List<String> args = new ArrayList<>(2 * batch.size());
        args.add(Long.toString(batch.get(0).leaseMillis())); // one lease for the whole call (grouped so)
        args.add(batch.get(0).token());
        for (int j = 1; j < batch.size(); j++) {
            args.add(batch.get(j).keys().lock());
            args.add(batch.get(j).token());
        }
        CompletableFuture<List<?>> replies = nodeCall.renew(batch.get(0).keys().lock(), args);
        List<CompletableFuture<Boolean>> answers = newAnswers(batch.size());
        replies.whenComplete((reply, error) -> {
            if (error != null) {
                // the first lock's node is down, say: the others may live on nodes that answer
                forward(grouped(single, batch, SAME_SLOT, perSlot -> renewBatch(single, batchCall, perSlot)), answers);
                return;
            }
            List<Renewal> elsewhere = new ArrayList<>();
            List<CompletableFuture<Boolean>> theirAnswers = new ArrayList<>();
            for (int j = 0; j < answers.size(); j++) {
                long answer;
                try {
                    answer = ((Number) reply.get(j)).longValue();
                }
                catch (RuntimeException ex) {
                    answers.get(j).completeExceptionally(ex); // a reply too short or of another kind: this key's answer
                    continue;
                }
                if (answer == -1L) {
                    elsewhere.add(batch.get(j));
                    theirAnswers.add(answers.get(j));
                }
                else if (answer == ABSENT_HERE) {
                    // maybe not moved yet to the node a migration's ASK sent the call to: asked on its own, where
                    // Redis routes its key; only that answer can tell the lock is gone
                    forward(List.of(single.renew(batch.get(j))), List.of(answers.get(j)));
                }
                else {
                    answers.get(j).complete(answer == 1L);
                }
            }
            if (elsewhere.isEmpty()) {
                return;
            }
            forward(round < MAX_ROUNDS ? acrossSlots(single, batchCall, nodeCall, elsewhere, round + 1)
                    : grouped(single, elsewhere, SAME_SLOT, perSlot -> renewBatch(single, batchCall, perSlot)), theirAnswers);
        });
        return answers;
    }

    private static List<CompletableFuture<Boolean>> newAnswers(int size) {
        List<CompletableFuture<Boolean>> answers = new ArrayList<>(size);
        for (int j = 0; j < size; j++) {
            answers.add(new CompletableFuture<>());
        }
        return answers;
    }

    private static void forward(List<CompletableFuture<Boolean>> from, List<CompletableFuture<Boolean>> to) {
        for (int j = 0; j < from.size(); j++) {
            CompletableFuture<Boolean> target = to.get(j);
            from.get(j).whenComplete((renewed, failure) -> {
                if (failure != null) {
                    target.completeExceptionally(failure);
                }
                else {
                    target.complete(renewed);
                }
            });
        }
    }

    /** Renewals that may share a call: the same place (a Cluster slot or master; 0 off a Cluster) and lease. */
    private record Group(int place, long leaseMillis) {
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

    private static List<CompletableFuture<Boolean>> renewBatch(SingleCall single, BatchCall batchCall,
            List<Renewal> batch) {
        if (batch.size() == 1) {
            return List.of(single.renew(batch.get(0)));
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
        List<CompletableFuture<Boolean>> answers = newAnswers(batch.size());
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
