package dev.leasehold.autoconfigure;

import dev.leasehold.aspect.InvalidDistributedLockException;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Turns Leasehold's startup failures (a {@code @DistributedLock} that cannot work, a Redis client it cannot
 * lock on) into Spring Boot's short "problem / action" report instead of a deep stack trace.
 */
class LeaseholdFailureAnalyzer implements FailureAnalyzer {

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidDistributedLockException invalid) {
                return new FailureAnalysis(invalid.getMessage(), invalid.getAction(), invalid);
            }
            if (cause instanceof UnsupportedConnectionFactoryException unsupported) {
                return new FailureAnalysis(unsupported.getMessage(),
                        "Use Spring Boot's default Redis client: remove the Jedis dependency (or the exclusion of "
                                + "io.lettuce:lettuce-core from spring-boot-starter-data-redis) so that "
                                + "spring.data.redis.* builds a Lettuce connection factory.",
                        unsupported);
            }
        }
        return null;
    }
}
