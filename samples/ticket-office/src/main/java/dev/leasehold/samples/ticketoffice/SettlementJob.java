package dev.leasehold.samples.ticketoffice;

import java.time.Duration;
import java.util.Optional;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The programmatic API and fencing tokens: every instance runs this job, the lock {@code settlement:<id>}
 * lets one at a time settle a show, and the database refuses a write whose fencing token is not newer
 * than the last one it took. So an instance that paused past its lease (and lost the lock to another)
 * cannot overwrite a newer settlement when it wakes up.
 */
@Component
public class SettlementJob {

    private static final Log logger = LogFactory.getLog(SettlementJob.class);

    private final LockService locks;

    private final ShowRepository shows;

    private final Box box;

    public SettlementJob(LockService locks, ShowRepository shows, Box box) {
        this.locks = locks;
        this.shows = shows;
        this.box = box;
    }

    @Scheduled(fixedDelayString = "${ticket-office.settlement-interval:5s}", initialDelayString = "${ticket-office.settlement-interval:5s}")
    public void settleAll() {
        shows.findAll().forEach(show -> settle(show.id()));
    }

    /**
     * Settles one show, unless another instance is settling it now.
     * @return the result, or empty when another instance held the lock
     */
    public Optional<Result> settle(long showId) {
        Optional<LockHandle> lock = locks.tryLock("settlement:" + showId, Duration.ZERO, null);
        if (lock.isEmpty()) {
            return Optional.empty();
        }
        try (LockHandle handle = lock.get()) {
            ShowRepository.Totals totals = shows.totals(showId);
            boolean written = shows.saveSettlement(showId, totals, handle.fencingToken(), box.node());
            if (!written) {
                logger.warn("Settlement of show " + showId + " with fencing token " + handle.fencingToken()
                        + " refused by the database: a newer one was written");
            }
            return Optional.of(new Result(showId, handle.fencingToken(), written, totals));
        }
    }

    /** @param written false when the database refused the token as stale */
    public record Result(long showId, long fence, boolean written, ShowRepository.Totals totals) {
    }
}
