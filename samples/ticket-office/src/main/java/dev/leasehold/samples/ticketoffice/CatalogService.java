package dev.leasehold.samples.ticketoffice;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockMode;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Read/write locks: any number of instances read a show's catalog entry at once ({@code READ} on
 * {@code catalog:<id>}); a price change ({@code WRITE}) waits until they are done and keeps new readers out
 * while it runs, so nobody sees a half-made change.
 */
@Service
public class CatalogService {

    private final ShowRepository shows;

    public CatalogService(ShowRepository shows) {
        this.shows = shows;
    }

    @Transactional(readOnly = true)
    @DistributedLock(name = "catalog", key = "#showId", mode = LockMode.READ)
    public Show show(long showId) {
        return shows.find(showId).orElseThrow(() -> new ShowNotFoundException(showId));
    }

    @Transactional
    @DistributedLock(name = "catalog", key = "#showId", mode = LockMode.WRITE)
    public Show changePrice(long showId, int priceCents) {
        if (priceCents < 0) {
            throw new IllegalArgumentException("priceCents must not be negative, was " + priceCents);
        }
        shows.updatePrice(showId, priceCents);
        return shows.find(showId).orElseThrow(() -> new ShowNotFoundException(showId));
    }
}
