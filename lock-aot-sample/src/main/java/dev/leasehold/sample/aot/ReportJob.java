package dev.leasehold.sample.aot;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockContext;
import dev.leasehold.LockHandle;

import org.springframework.stereotype.Component;

/** One locked job, with a key expression over a record's accessor and a fallback (both read reflectively). */
@Component
public class ReportJob {

    public record Day(String date) {
    }

    /** Returns the fencing token of the lock held while it ran. */
    @DistributedLock(name = "report", key = "#day.date", waitTime = "0", fallback = "busy")
    public long run(Day day) {
        return LockContext.current().map(LockHandle::fencingToken).orElse(-1L);
    }

    long busy(Day day, LockAcquisitionException failure) {
        return 0;
    }
}
