package dev.leasehold.engine.holding;

import dev.leasehold.LockMode;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.server.LockKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-key bindings behind re-entrancy, with several threads on one key (readers) and one thread re-binding. */
class ThreadBindingsTest {

    private final ThreadBindings bindings = new ThreadBindings();

    private final Thread first = new Thread(() -> { }, "first");

    private final Thread second = new Thread(() -> { }, "second");

    private final Thread third = new Thread(() -> { }, "third");

    @Test
    void eachThreadFindsOnlyItsOwnLockOnASharedKey() {
        HeldLock firstReader = reader("report", first);
        HeldLock secondReader = reader("report", second);
        HeldLock thirdReader = reader("report", third);
        bindings.bind(firstReader);
        bindings.bind(secondReader);
        bindings.bind(thirdReader);

        assertThat(bindings.get(first, "report")).isSameAs(firstReader);
        assertThat(bindings.get(second, "report")).isSameAs(secondReader);
        assertThat(bindings.get(third, "report")).isSameAs(thirdReader);
        assertThat(bindings.get(first, "other")).isNull();

        bindings.unbind(secondReader);
        assertThat(bindings.get(second, "report")).isNull();
        assertThat(bindings.get(first, "report")).isSameAs(firstReader);
        assertThat(bindings.get(third, "report")).isSameAs(thirdReader);

        bindings.unbind(firstReader);
        bindings.unbind(firstReader); // not bound any more: nothing changes
        assertThat(bindings.get(third, "report")).isSameAs(thirdReader);
        bindings.unbind(thirdReader);
        assertThat(bindings.anyOf(third, lock -> true)).isFalse();
    }

    @Test
    void aThreadsNewLockReplacesItsOldOneAndUnbindingTheOldOneLeavesTheNew() {
        HeldLock old = reader("job", first);
        HeldLock other = reader("job", second);
        HeldLock renewed = reader("job", first);
        bindings.bind(old);
        bindings.bind(other);
        bindings.bind(renewed);

        assertThat(bindings.get(first, "job")).isSameAs(renewed);
        bindings.unbind(old);
        assertThat(bindings.get(first, "job")).isSameAs(renewed);
        assertThat(bindings.get(second, "job")).isSameAs(other);

        HeldLock alone = reader("single", first);
        HeldLock replacing = reader("single", first);
        bindings.bind(alone);
        bindings.bind(replacing);
        bindings.unbind(alone);
        assertThat(bindings.get(first, "single")).isSameAs(replacing);
    }

    @Test
    void anyOfLooksAtTheThreadsOwnLocksOnly() {
        bindings.bind(reader("a", first));
        bindings.bind(reader("b", second));
        bindings.bind(reader("b", third));

        assertThat(bindings.anyOf(first, lock -> lock.key().equals("a"))).isTrue();
        assertThat(bindings.anyOf(first, lock -> lock.key().equals("b"))).isFalse();
        assertThat(bindings.anyOf(third, lock -> lock.key().equals("b"))).isTrue();
    }

    private static HeldLock reader(String key, Thread owner) {
        return new HeldLock(LockKeys.of("lock:", key), LockMode.READ, "token-" + owner.getName(), 1, owner, true, 30_000,
                29_000, System.nanoTime(), false);
    }
}
