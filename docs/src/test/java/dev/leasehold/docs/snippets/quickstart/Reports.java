package dev.leasehold.docs.snippets.quickstart;

// tag::reports[]
import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;

import org.springframework.stereotype.Service;

@Service
class Reports {

    private final LockService locks;

    Reports(LockService locks) { this.locks = locks; }

    void rebuild() {
        // lock, run, always release (an action that returns a value gets it back: T withLock(..., Supplier<T>))
        locks.withLock("report:daily", Duration.ofSeconds(2), () -> build());

        // or by hand, with the fencing token for the resource
        try (LockHandle lock = locks.lock("report:weekly", Duration.ofSeconds(2))) {
            repository.saveIfNewer(report, lock.fencingToken());
        }

        // or only if free now
        locks.tryLock("report:monthly", Duration.ZERO, null).ifPresent(lock -> { try (lock) { build(); } });
    }
    private final ReportRepository repository = new ReportRepository(); // docs:hide
    private final String report = "report"; // docs:hide
    private void build() { } // docs:hide
}
// end::reports[]

class ReportRepository {

    void saveIfNewer(String report, long fencingToken) {
    }
}
