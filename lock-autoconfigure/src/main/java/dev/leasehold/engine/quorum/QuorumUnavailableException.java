package dev.leasehold.engine.quorum;

/** A step of the quorum could not be decided: too few nodes answered in time, or the answers came too late. */
public class QuorumUnavailableException extends RuntimeException {

    public QuorumUnavailableException(String message) {
        super(message, null, false, false);
    }
}
