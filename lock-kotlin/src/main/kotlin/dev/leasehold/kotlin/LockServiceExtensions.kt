@file:JvmName("LockServiceExtensions")

package dev.leasehold.kotlin

import dev.leasehold.LockAcquisitionException
import dev.leasehold.LockHandle
import dev.leasehold.LockService
import java.util.concurrent.CompletionException
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.Duration
import kotlin.time.toJavaDuration
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.future.await
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext

/*
 * Suspending forms of LockService, built on tryLockAsync: a coroutine waiting for a lock is suspended, and
 * its thread serves other coroutines meanwhile. They take kotlin.time.Duration (5.seconds), which also keeps
 * them apart from the blocking Java members of the same name (those take java.time.Duration).
 */

/**
 * Suspends until the lock is granted, or returns null when another owner held the key for the whole
 * [waitTime]; the thread is free while it waits. [leaseTime] null is a lease the watchdog renews while
 * held, else a fixed lease. Close the handle when done (`closeAsync()` never blocks), or use [withLock].
 *
 * Cancelling the coroutine stops the wait and gives back whatever was granted at that moment. Like
 * [LockService.tryLockAsync] the lock belongs to the handle, not to a thread: it is not re-entrant.
 *
 * @throws LockAcquisitionException when Redis could not be reached, or the application is shutting down
 */
public suspend fun LockService.tryLock(key: String, waitTime: Duration, leaseTime: Duration? = null): LockHandle? {
    val stage = tryLockAsync(key, waitTime.toJavaDuration(), leaseTime?.toJavaDuration()).toCompletableFuture()
    return suspendCancellableCoroutine { continuation ->
        continuation.invokeOnCancellation { stage.cancel(false) } // the engine takes back a grant that raced with it
        stage.whenComplete { handle, error ->
            if (error != null) {
                continuation.resumeWithException((error as? CompletionException)?.cause ?: error)
            } else {
                // granted as the coroutine was cancelled: nobody will close it, so release it now
                continuation.resume(handle.orElse(null)) { _, granted, _ -> granted?.closeAsync() }
            }
        }
    }
}

/**
 * Locks [key] (suspending, without a thread, up to [waitTime]), runs [action] with the handle (for its
 * fencing token), and releases when the action returns, throws or is cancelled; the release is done before
 * this returns. The lease is renewed by the watchdog while the action runs, unless [leaseTime] fixes it.
 *
 * @throws LockAcquisitionException when another owner held the key for the whole wait, or Redis could not
 * be reached
 */
public suspend fun <T> LockService.withLock(
    key: String,
    waitTime: Duration,
    leaseTime: Duration? = null,
    action: suspend (LockHandle) -> T,
): T {
    val handle = tryLock(key, waitTime, leaseTime)
        ?: throw LockAcquisitionException(key, "Could not lock '$key' within $waitTime: another owner held it")
    try {
        return action(handle)
    } finally {
        withContext(NonCancellable) { handle.closeAsync().await() }
    }
}

/**
 * The lock `@DistributedLock` took for the suspend function (or the `Mono`/`Flux`) running now, for its
 * fencing token; null outside one. The coroutine form of `LockContext.current()`: the handle travels in the
 * coroutine's Reactor context, not on a thread.
 */
public suspend fun currentLock(): LockHandle? =
    currentCoroutineContext()[ReactorContext]?.context?.getOrDefault<LockHandle>(LockHandle::class.java, null)
