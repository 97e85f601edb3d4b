package dev.leasehold.samples.ticketoffice;

import java.time.Duration;

import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The box office's check-then-sell, run inside the caller's transaction (with or without the lock): it
 * reads the stock, takes the payment, and writes the booking and the stock it computed. Two of these at
 * once on one show both sell the same seat, and the second stock write undoes the first.
 */
@Component
public class Box {

    private final ShowRepository shows;

    private final TicketOfficeProperties properties;

    private final Environment environment;

    private final Duration paymentTime;

    public Box(ShowRepository shows, TicketOfficeProperties properties, Environment environment) {
        this.shows = shows;
        this.properties = properties;
        this.environment = environment;
        this.paymentTime = properties.paymentTime();
    }

    /** This instance's name: {@code ticket-office.node}, else "node-" and the HTTP port. */
    public String node() {
        if (properties.node() != null && !properties.node().isBlank()) {
            return properties.node();
        }
        return "node-" + environment.getProperty("local.server.port", environment.getProperty("server.port", "8080"));
    }

    Booking sell(long showId, int seats, String customer, long fence) {
        if (seats < 1 || seats > 10) {
            throw new IllegalArgumentException("seats must be 1 to 10, was " + seats);
        }
        int left = shows.seatsLeft(showId);
        if (left < seats) {
            return new Booking(showId, false, 0, seats, node(), fence);
        }
        takePayment();
        long id = shows.insertBooking(showId, seats, left - seats, shows.priceCents(showId), customer, node(), fence);
        return new Booking(showId, true, id, seats, node(), fence);
    }

    /** Stands in for the payment provider's round trip, between the stock check and the write. */
    private void takePayment() {
        if (paymentTime.isZero()) {
            return;
        }
        try {
            java.util.concurrent.TimeUnit.NANOSECONDS.sleep(paymentTime.toNanos());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while taking the payment", ex);
        }
    }
}
