package dev.leasehold.samples.ticketoffice;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.fail;

/** Waits on a condition with a deadline instead of sleeping a fixed time. */
final class Await {

    private Await() {
    }

    static void until(Duration timeout, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("Timed out after " + timeout + " waiting until " + what);
            }
            try {
                Thread.sleep(20);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
    }
}
