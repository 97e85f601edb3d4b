package dev.leasehold.samples.ticketoffice;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The same booking without the lock, to show what the lock prevents: under concurrent load, two
 * transactions read the same stock, both sell, and the show is oversold.
 */
@Service
public class UnlockedBookingService {

    private final Box box;

    public UnlockedBookingService(Box box) {
        this.box = box;
    }

    @Transactional
    public Booking book(long showId, int seats, String customer) {
        return box.sell(showId, seats, customer, 0L);
    }
}
