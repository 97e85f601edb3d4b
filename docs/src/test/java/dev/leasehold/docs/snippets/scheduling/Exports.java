package dev.leasehold.docs.snippets.scheduling;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAssert;
import dev.leasehold.OnLockFailure;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

@Service
class Exports {

    // tag::scheduled[]
    @Scheduled(cron = "0 */5 * * * *")                       // every 5 minutes, on every instance
    @DistributedLock(name = "nightly-export",
            waitTime = "0", onFailure = OnLockFailure.SKIP,   // the instance that comes second skips
            leaseTime = "10m",                                // bound after a crash (see below)
            holdAtLeast = "1m")                               // > clock/scheduler skew, < the period
    public void export() {
        // ...
    }
    // end::scheduled[]

    // tag::assert-locked[]
    public void settle(long orderId) {
        LockAssert.assertLocked("order:" + orderId);   // IllegalStateException unless this thread holds it
        // ...
    }
    // end::assert-locked[]
}
