package dev.leasehold.samples.ticketoffice;

/** @param seats how many seats, 1 to 10 */
public record BookingRequest(int seats, String customer) {
}
