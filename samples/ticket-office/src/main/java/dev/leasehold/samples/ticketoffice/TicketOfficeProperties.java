package dev.leasehold.samples.ticketoffice;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the sample itself.
 * @param node name of this instance, stored with each booking (default: "node-" and the HTTP port)
 * @param paymentTime how long taking the payment takes, between checking the stock and writing the booking:
 * the window in which two unlocked bookings oversell
 * @param demoShows shows created when the database has none
 * @param settlementInterval how often every instance tries to settle every show
 * @param dataDir folder of the H2 database file
 */
@ConfigurationProperties("ticket-office")
public record TicketOfficeProperties(String node, Duration paymentTime, int demoShows, Duration settlementInterval,
        String dataDir) {

    public TicketOfficeProperties {
        paymentTime = paymentTime != null ? paymentTime : Duration.ofMillis(2);
    }
}
