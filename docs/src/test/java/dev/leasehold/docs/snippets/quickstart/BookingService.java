package dev.leasehold.docs.snippets.quickstart;

import dev.leasehold.DistributedLock;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** README: the first example. */
@Service
class BookingService {

    // tag::book[]
    @Transactional
    @DistributedLock(name = "show", key = "#showId")   // one booking per show at a time, across every instance
    public Booking book(long showId, int seats) {
        // ...
        return new Booking(showId, seats); // docs:hide
    }
    // end::book[]

    record Booking(long showId, int seats) {
    }
}
