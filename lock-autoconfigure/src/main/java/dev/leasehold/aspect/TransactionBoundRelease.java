package dev.leasehold.aspect;

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

    /** Whether a transaction is open on this thread (and takes synchronizations). */
    static boolean transactionOpen() {
        return TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive();
    }

    /** Completes when the transaction open on this thread completes, committed or rolled back. */
    static java.util.concurrent.CompletableFuture<Void> completion() {
        java.util.concurrent.CompletableFuture<Void> completed = new java.util.concurrent.CompletableFuture<>();
        releaseOnCompletion(() -> completed.complete(null));
        return completed;
    }

    /** Runs {@code release} when the transaction open on this thread completes, committed or rolled back. */
    static void releaseOnCompletion(Runnable release) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                release.run();
            }
        });
    }
}
