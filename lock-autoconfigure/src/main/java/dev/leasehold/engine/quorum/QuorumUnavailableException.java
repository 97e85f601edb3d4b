package dev.leasehold.engine.quorum;

import dev.leasehold.engine.server.LockServerException;

/** A step of the quorum could not be decided: too few nodes answered in time, or the answers came too late. */
public class QuorumUnavailableException extends LockServerException {

    public QuorumUnavailableException(String message) {
        super(Kind.UNAVAILABLE, message, null);
    }
}
