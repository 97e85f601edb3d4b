package dev.leasehold.engine.quorum;

/**
 * How one node of the quorum is doing, for metrics and the actuator endpoint.
 * @param node {@code host:port} (never the password)
 * @param answering whether its last reply (to a lock step or the health probe) came in time
 * @param counted whether its answers count toward a majority now
 * @param restartedAndWaiting it restarted (new {@code run_id}) and does not count until {@code countsAgainInMillis} passed
 * @param countsAgainInMillis time left of the restart delay, 0 when none
 * @param granted acquires it granted
 * @param refused acquires it refused (someone else holds the key there)
 * @param errors steps that failed or timed out on it
 */
public record QuorumNodeHealth(String node, boolean answering, boolean counted, boolean restartedAndWaiting,
        long countsAgainInMillis, long granted, long refused, long errors) {
}
