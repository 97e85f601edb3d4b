package dev.leasehold.engine.quorum;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.CoarseTimeouts;

import org.jspecify.annotations.Nullable;

/**
 * One step sent to several nodes at once. The step is dispatched to every node from the calling thread,
 * in node order, so steps on one key keep the order they were called in on every node's connection.
 * The round completes with the replies so far as soon as {@code decided} says the outcome is known, or
 * when every node answered or ran out of time ({@code timeoutNanos} each).
 */
final class Round<T> {

    /** One node's answer: a value, or the error (timeout, error reply, no connection). */
    record Reply<T>(QuorumNode node, @Nullable T value, @Nullable Throwable error, boolean counted) {

        boolean ok() {
            return error == null;
        }

        /** The value of an {@link #ok()} reply. */
        T answer() {
            return Objects.requireNonNull(value, "only a reply that is ok has a value");
        }
    }

    private final List<Reply<T>> replies = new ArrayList<>();

    private final CompletableFuture<List<Reply<T>>> outcome = new CompletableFuture<>();

    private final List<CompletableFuture<T>> calls = new ArrayList<>();

    private final int expected;

    private final Predicate<List<Reply<T>>> decided;

    private Round(int expected, Predicate<List<Reply<T>>> decided) {
        this.expected = expected;
        this.decided = decided;
    }

    static <T> Round<T> send(CoarseTimeouts timeouts, List<QuorumNode> nodes,
            Function<QuorumNode, CompletableFuture<T>> step, long timeoutNanos, Predicate<List<Reply<T>>> decided) {
        return send(timeouts, nodes, step, timeoutNanos, decided, null);
    }

    /**
     * @param observer told of every node's reply as it comes, also after the round was decided (metrics): in the
     * callback the round registers anyway, not in one more completion stage per node
     */
    static <T> Round<T> send(CoarseTimeouts timeouts, List<QuorumNode> nodes,
            Function<QuorumNode, CompletableFuture<T>> step, long timeoutNanos, Predicate<List<Reply<T>>> decided,
            @Nullable Consumer<Reply<T>> observer) {
        Round<T> round = new Round<>(nodes.size(), decided);
        for (QuorumNode node : nodes) {
            CompletableFuture<T> call;
            try {
                call = timeouts.orTimeout(step.apply(node), Math.max(1, timeoutNanos));
            }
            catch (RuntimeException ex) {
                call = CompletableFuture.failedFuture(ex);
            }
            round.calls.add(call);
        }
        if (nodes.isEmpty()) {
            round.outcome.complete(List.of());
        }
        for (int i = 0; i < nodes.size(); i++) {
            QuorumNode node = nodes.get(i);
            round.calls.get(i).whenComplete((value, error) -> {
                if (error != null) {
                    node.failed();
                }
                // an error reply is an answer (an ACL rule, say); a timeout or no connection is not
                node.answered(error == null || (unwrap(error) instanceof LockServerException ex
                        && ex.kind() == LockServerException.Kind.REFUSED));
                Reply<T> reply = new Reply<>(node, value, error != null ? unwrap(error) : null, node.counts());
                if (observer != null) {
                    try {
                        observer.accept(reply);
                    }
                    catch (RuntimeException ex) {
                        // what observes the replies (metrics) never keeps a reply from counting
                    }
                }
                round.add(reply);
            });
        }
        return round;
    }

    private void add(Reply<T> reply) {
        List<Reply<T>> snapshot = null;
        synchronized (replies) {
            replies.add(reply);
            if (!outcome.isDone() && (replies.size() == expected || decided.test(replies))) {
                snapshot = List.copyOf(replies);
            }
        }
        if (snapshot != null) {
            outcome.complete(snapshot);
        }
    }

    CompletableFuture<List<Reply<T>>> outcome() {
        return outcome;
    }

    /** Each node's call, in node order (also those still under way when the round was decided). */
    List<CompletableFuture<T>> calls() {
        return calls;
    }

    static Throwable unwrap(Throwable error) {
        Throwable current = error;
        while ((current instanceof java.util.concurrent.CompletionException
                || current instanceof java.util.concurrent.ExecutionException) && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }
}
