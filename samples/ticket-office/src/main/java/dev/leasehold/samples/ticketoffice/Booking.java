package dev.leasehold.samples.ticketoffice;

/**
 * The answer to a booking request.
 * @param bookingId 0 when sold out
 * @param fence the fencing token of the lock it was booked under (0 without the lock)
 */
public record Booking(long showId, boolean booked, long bookingId, int seats, String node, long fence) {
}
