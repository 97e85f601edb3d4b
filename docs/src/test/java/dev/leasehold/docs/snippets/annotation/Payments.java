package dev.leasehold.docs.snippets.annotation;

import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import dev.leasehold.DistributedLock;
import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockContext;
import dev.leasehold.LockMode;
import dev.leasehold.OnLockFailure;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

// tag::payments[]
@Service
class Payments {

    @DistributedLock(name = "account", key = "#transfer.from")             // lock "account:<from>"
    @Transactional                                                         // the lock wraps the transaction
    public void transfer(Transfer transfer) {
        long token = LockContext.current().orElseThrow().fencingToken();   // pass it to the resource
        // ...
    }

    @DistributedLock(name = "account", key = "#ids", waitTime = "2s")     // every id, all or nothing
    public void settle(List<Long> ids) {
        // ...
    }

    @DistributedLock(name = "report", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public Optional<Report> rebuildIfIdle() {                              // Optional.empty() when busy
        // ...
        return Optional.of(new Report()); // docs:hide
    }

    @DistributedLock(name = "export", key = "#day", waitTime = "${exports.wait:5s}",
            leaseTime = "10m", fallback = "exportBusy")
    public Path export(LocalDate day) {
        // ...
        return Path.of(day + ".csv"); // docs:hide
    }

    Path exportBusy(LocalDate day, LockAcquisitionException busy) {       // same parameters (+ the failure)
        // ...
        return Path.of("busy.csv"); // docs:hide
    }

    @DistributedLock(name = "catalog", key = "#sku", mode = LockMode.READ)
    public Mono<Item> item(String sku) {                                   // held until the Mono ends
        // ...
        return Mono.just(new Item(sku)); // docs:hide
    }
}
// end::payments[]

class Transfer {

    public long getFrom() {
        return 1;
    }
}

class Report {
}

record Item(String sku) {
}
