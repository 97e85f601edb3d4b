package dev.leasehold.engine.key;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.leasehold.LockMode;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * A queued acquisition (its thread, or null when it is bound to none); its turn completes with the turn, or with
 * null when it gave up first, never exceptionally. Whoever {@link #claim() claims} it (the waiter giving up, or
 * the one passing the turn to it) is the only one to complete its turn.
 */
public record Waiter(@Nullable Thread thread, @Nullable LockMode takeOverMode, CompletableFuture<@Nullable Turn> turn, AtomicBoolean claimed,
        long enteredAtNanos) {

    /** The turn of a waiter that found the key FREE. */
    static final Waiter FIRST = new Waiter(null, null, CompletableFuture.completedFuture(Turn.FREE),
            new AtomicBoolean(true), 0);

    Waiter(@Nullable Thread thread, @Nullable LockMode takeOverMode) {
        this(thread, takeOverMode, new CompletableFuture<>(), new AtomicBoolean(), EngineClock.nanoTime());
    }

    boolean claim() {
        return claimed.compareAndSet(false, true);
    }
}
