package dev.leasehold.samples.ticketoffice;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Books seats. Checking the stock and writing the booking is a read-then-write: two instances doing it at
 * once both see the last seat. The lock {@code show:<id>} makes them take turns, across every instance;
 * it is taken before the transaction begins and released after it committed, so the next holder reads
 * the committed stock.
 */
@Service
public class BookingService {

    private final Box box;

    public BookingService(Box box) {
        this.box = box;
    }

    @Transactional
    @DistributedLock(name = "show", key = "#showId")
    public Booking book(long showId, int seats, String customer) {
        long fence = LockContext.current().map(LockHandle::fencingToken).orElse(0L);
        return box.sell(showId, seats, customer, fence);
    }
}
