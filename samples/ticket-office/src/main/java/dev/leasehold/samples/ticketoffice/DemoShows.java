package dev.leasehold.samples.ticketoffice;

import java.time.Duration;

import dev.leasehold.LockService;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;

/**
 * Creates a few shows when the database has none. Instances that start together would each see an
 * empty table, so the check and the inserts run under one lock.
 */
@Component
public class DemoShows implements ApplicationRunner {

    private static final String[] TITLES = { "Hamlet", "The Magic Flute", "Swan Lake", "Waiting for Godot" };

    private final LockService locks;

    private final ShowRepository shows;

    private final TicketOfficeProperties properties;

    public DemoShows(LockService locks, ShowRepository shows, TicketOfficeProperties properties) {
        this.locks = locks;
        this.shows = shows;
        this.properties = properties;
    }

    @Override
    public void run(ApplicationArguments args) {
        locks.withLock("catalog:seed", Duration.ofSeconds(10), () -> {
            if (shows.count() == 0) {
                for (int i = 0; i < properties.demoShows(); i++) {
                    shows.create(TITLES[i % TITLES.length], 100, 4500 + 500 * i);
                }
            }
            return null;
        });
    }
}
