package dev.leasehold.aspect;

import java.util.List;
import java.util.function.Consumer;

import dev.leasehold.LockHandle;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Holds a lock taken inside an already open transaction until that transaction completes: released on
 * return, the next holder could read what this one wrote before it was committed. Only loaded when
 * spring-tx is on the class path.
 */
final class TransactionBoundRelease {

    private TransactionBoundRelease() {
    }

    /** True when a transaction is open on this thread and will release the locks when it completes. */
    static boolean deferIfInTransaction(List<LockHandle> handles, Consumer<List<LockHandle>> release,
            Runnable warnOnce) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()
                || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return false;
        }
        warnOnce.run();
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                release.accept(handles);
            }
        });
        return true;
    }
}
