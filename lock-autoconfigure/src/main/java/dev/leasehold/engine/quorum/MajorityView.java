package dev.leasehold.engine.quorum;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import dev.leasehold.engine.server.KeyState;

/** One key as a majority of the nodes sees it, from what each node said (for the actuator endpoint). */
final class MajorityView {

    private MajorityView() {
    }

    /**
     * Held when a majority holds it, with the lease a majority still has (the majority-th longest); the
     * highest fencing counter of any node (the next grant is higher); a waiting writer when a majority
     * has its mark.
     */
    static KeyState of(String key, List<KeyState> states, int majority) {
        List<KeyState> holding = states.stream().filter(KeyState::held).toList();
        long fence = states.stream().mapToLong(KeyState::fencingCounter).max().orElse(0);
        boolean writerWaiting = states.stream().filter(KeyState::writerWaiting).count() >= majority;
        List<KeyState.QueuedInstance> queue = onMajority(states.stream().map(KeyState::queue).toList(), majority);
        if (holding.size() < majority) {
            return new KeyState(key, false, null, 0, 0, writerWaiting, fence, List.of(), queue);
        }
        long[] leases = holding.stream().mapToLong(KeyState::leaseLeftMillis).sorted().toArray();
        long readers = holding.stream().mapToLong(KeyState::readers).max().orElse(0);
        return new KeyState(key, true, holding.get(0).mode(), readers, leases[leases.length - majority], writerWaiting,
                fence, onMajority(holding.stream().map(KeyState::holders).toList(), majority), queue);
    }

    /** What a majority of the nodes lists, in the order the nodes list it. */
    private static <T> List<T> onMajority(List<List<T>> perNode, int majority) {
        Map<T, Integer> counts = new LinkedHashMap<>();
        perNode.forEach(listed -> new LinkedHashSet<>(listed).forEach(item -> counts.merge(item, 1, Integer::sum)));
        return counts.entrySet().stream().filter(entry -> entry.getValue() >= majority).map(Map.Entry::getKey).toList();
    }
}
