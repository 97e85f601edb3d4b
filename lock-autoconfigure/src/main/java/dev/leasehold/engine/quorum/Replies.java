package dev.leasehold.engine.quorum;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

import dev.leasehold.engine.quorum.Round.Reply;
import dev.leasehold.engine.server.Grant;

import org.jspecify.annotations.Nullable;

/** Counting and describing the replies of a round, for decisions and for messages a user reads. */
final class Replies {

    private Replies() {
    }

    static <T> int count(List<Reply<T>> replies, Predicate<Reply<T>> condition) {
        int count = 0;
        for (Reply<T> reply : replies) {
            if (condition.test(reply)) {
                count++;
            }
        }
        return count;
    }

    static <T> String describe(List<QuorumNode> nodes, List<Reply<T>> replies) {
        StringBuilder text = new StringBuilder();
        for (QuorumNode node : nodes) {
            Reply<T> reply = replies.stream().filter(r -> r.node() == node).findFirst().orElse(null);
            if (text.length() > 0) {
                text.append(", ");
            }
            text.append(node.name()).append(": ");
            if (reply == null) {
                text.append("no answer yet");
            }
            else if (!reply.ok()) {
                text.append(reply.error() instanceof java.util.concurrent.TimeoutException ? "timed out"
                        : String.valueOf(Objects.requireNonNull(reply.error()).getMessage()));
            }
            else {
                text.append(reply.value() instanceof Grant grant ? (grant.granted() ? "granted" : "refused")
                        : String.valueOf(reply.value()));
                if (!reply.counted()) {
                    text.append(" (not counted: restarted or not verified)");
                }
            }
        }
        return text.toString();
    }

}
