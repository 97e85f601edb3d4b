package dev.leasehold.samples.ticketoffice;

/**
 * A show and its seat stock.
 * @param booked seats in bookings
 * @param oversold seats booked beyond the hall's size (0 when every booking had its seat)
 */
public record Show(long id, String title, int seatsTotal, int seatsLeft, int priceCents, long booked, long oversold) {
}
