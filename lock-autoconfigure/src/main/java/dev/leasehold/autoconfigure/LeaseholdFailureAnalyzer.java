package dev.leasehold.autoconfigure;

import dev.leasehold.aspect.InvalidDistributedLockException;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Turns Leasehold's startup failures (a {@code @DistributedLock} that cannot work) into Spring Boot's short
 * "problem / action" report instead of a deep stack trace.
 */
class LeaseholdFailureAnalyzer implements FailureAnalyzer {

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidDistributedLockException invalid) {
                return new FailureAnalysis(invalid.getMessage(), invalid.getAction(), invalid);
            }
        }
        return null;
    }
}
