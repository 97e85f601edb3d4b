package dev.leasehold.samples.ticketoffice;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;

import org.springframework.stereotype.Component;

/**
 * The lock waits of the bookings ({@code leasehold.lock.acquire}, acquired, mode {@code EXCLUSIVE}) as one
 * report: every figure from one snapshot of the timer. Asking Actuator for p50 and p99 one after the other reads
 * a sliding window twice, and once gave a median above the 99th percentile.
 */
@Component
public class LockWaits {

    private final MeterRegistry registry;

    public LockWaits(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * @param count waits recorded since the start
     * @param p50Millis the median of the last minute's waits ({@code management.metrics.distribution.expiry})
     * @param p99Millis their 99th percentile
     * @param maxMillis the longest of them
     */
    public record Report(long count, double p50Millis, double p99Millis, double maxMillis) {
    }

    public Report report() {
        Timer timer = registry.find("leasehold.lock.acquire").tag("result", "acquired").tag("mode", "EXCLUSIVE").timer();
        if (timer == null) {
            return new Report(0, 0, 0, 0);
        }
        HistogramSnapshot snapshot = timer.takeSnapshot();
        double max = snapshot.max(java.util.concurrent.TimeUnit.MILLISECONDS);
        return new Report(snapshot.count(), percentile(snapshot, 0.5, max), percentile(snapshot, 0.99, max), max);
    }

    private static double percentile(HistogramSnapshot snapshot, double phi, double max) {
        for (ValueAtPercentile value : snapshot.percentileValues()) {
            if (value.percentile() == phi) {
                // a percentile is read off a histogram bucket (several per cent wide), and may name the bucket's
                // upper end: no wait of the window was longer than its longest one
                return Math.min(value.value(java.util.concurrent.TimeUnit.MILLISECONDS), max);
            }
        }
        throw new IllegalStateException("leasehold.lock.acquire does not publish the percentile " + phi
                + " (management.metrics.distribution.percentiles)");
    }
}
