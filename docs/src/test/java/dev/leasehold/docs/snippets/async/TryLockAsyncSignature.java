package dev.leasehold.docs.snippets.async;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;

/** The declaration the guide shows is LockService's own: {@code @Override} fails to compile if it is not. */
abstract class TryLockAsyncSignature implements LockService {

    @Override
    public abstract
    // tag::signature[]
    CompletionStage<Optional<LockHandle>> tryLockAsync(String key, Duration waitTime, Duration leaseTime);
    // end::signature[]
}
