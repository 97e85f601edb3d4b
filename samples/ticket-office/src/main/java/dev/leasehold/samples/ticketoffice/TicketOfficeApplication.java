package dev.leasehold.samples.ticketoffice;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A ticket office that books seats with {@code @DistributedLock}: run two or more instances against one
 * Redis and one database, and no seat is sold twice.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
@EnableScheduling
public class TicketOfficeApplication {

    public static void main(String[] args) {
        SpringApplication.run(TicketOfficeApplication.class, args);
    }
}
