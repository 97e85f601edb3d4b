package dev.leasehold.metrics;

import java.util.function.ToDoubleFunction;

import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.quorum.QuorumNodeHealth;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Per-node health of the quorum mode, tagged {@code node} = {@code host:port}:
 * <ul>
 * <li>{@code leasehold.quorum.node.answering} (gauge, 1/0): its last reply came in time</li>
 * <li>{@code leasehold.quorum.node.counted} (gauge, 1/0): its answers count toward a majority now</li>
 * <li>{@code leasehold.quorum.node.restarted.waiting} (gauge, 1/0): it restarted and waits out its delay</li>
 * <li>{@code leasehold.quorum.node.acquires} (counter): acquires it answered, tagged {@code result} =
 * {@code granted} or {@code refused}</li>
 * <li>{@code leasehold.quorum.node.errors} (counter): steps that failed or timed out on it</li>
 * </ul>
 */
public class QuorumMetrics implements MeterBinder {

    private final java.util.function.Supplier<QuorumLockServer> quorum;

    /** @param quorum the quorum server, or null when the application defined a LockServer of its own */
    public QuorumMetrics(java.util.function.Supplier<QuorumLockServer> quorum) {
        this.quorum = quorum;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        QuorumLockServer server = quorum.get();
        if (server == null) {
            return;
        }
        for (int i = 0; i < server.nodeHealth().size(); i++) {
            int index = i;
            String node = server.nodeHealth().get(i).node();
            gauge(registry, server, "leasehold.quorum.node.answering", node, index, h -> h.answering() ? 1 : 0,
                    "Whether the node's last reply came in time");
            gauge(registry, server, "leasehold.quorum.node.counted", node, index, h -> h.counted() ? 1 : 0,
                    "Whether the node counts toward a majority now");
            gauge(registry, server, "leasehold.quorum.node.restarted.waiting", node, index,
                    h -> h.restartedAndWaiting() ? 1 : 0, "Whether the node restarted and waits out its delay");
            FunctionCounter.builder("leasehold.quorum.node.acquires", server, s -> s.nodeHealth().get(index).granted())
                .tags("node", node, "result", "granted")
                .description("Acquires the node answered")
                .register(registry);
            FunctionCounter.builder("leasehold.quorum.node.acquires", server, s -> s.nodeHealth().get(index).refused())
                .tags("node", node, "result", "refused")
                .description("Acquires the node answered")
                .register(registry);
            FunctionCounter.builder("leasehold.quorum.node.errors", server, s -> s.nodeHealth().get(index).errors())
                .tags("node", node)
                .description("Steps that failed or timed out on the node")
                .register(registry);
        }
    }

    private static void gauge(MeterRegistry registry, QuorumLockServer server, String name, String node, int index,
            ToDoubleFunction<QuorumNodeHealth> value, String description) {
        Gauge.builder(name, server, s -> value.applyAsDouble(s.nodeHealth().get(index)))
            .tag("node", node)
            .description(description)
            .register(registry);
    }
}
