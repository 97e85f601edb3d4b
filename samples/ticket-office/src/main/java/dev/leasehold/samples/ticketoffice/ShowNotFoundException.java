package dev.leasehold.samples.ticketoffice;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

@ResponseStatus(HttpStatus.NOT_FOUND)
public class ShowNotFoundException extends RuntimeException {

    public ShowNotFoundException(long showId) {
        super("No show " + showId);
    }
}
