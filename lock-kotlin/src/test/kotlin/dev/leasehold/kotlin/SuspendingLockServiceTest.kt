package dev.leasehold.kotlin

import dev.leasehold.LockAcquisitionException
import dev.leasehold.LockService
import dev.leasehold.engine.DefaultLockEngine
import dev.leasehold.test.redis.RedisServerExtension
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * The suspending `withLock` and `tryLock`: a coroutine that waits for a lock is suspended, not its thread.
 * The key is held by a second application context, as another instance would hold it.
 */
@Timeout(120)
class SuspendingLockServiceTest {

    companion object {
        private const val WAITERS = 200

        @JvmField
        @RegisterExtension
        val redis = RedisServerExtension()
    }

    private fun bothInstances(test: (mine: LockService, engine: DefaultLockEngine, other: LockService) -> Unit) {
        contextOn(redis.server()).run { other ->
            contextOn(redis.server()).run { context ->
                test(context.getBean(LockService::class.java), context.getBean(DefaultLockEngine::class.java),
                    other.getBean(LockService::class.java))
            }
        }
    }

    @Test
    fun `200 coroutines waiting for a held key on one thread leave that thread free`() = bothInstances { locks, engine, other ->
        runBlocking { locks.withLock("warm-up", 10.seconds) { } } // connections and engine threads exist now
        val held = other.lock("hot", java.time.Duration.ofSeconds(5))
        Executors.newSingleThreadExecutor { Thread(it, "the-one-thread") }.let { executor ->
            val oneThread = executor.asCoroutineDispatcher()
            try {
                executor.submit { }.get() // its thread exists now
                val threadsBefore = liveThreads()
                val started = AtomicInteger()
                val tokens = (0 until WAITERS).map {
                    CoroutineScope(oneThread).async {
                        started.incrementAndGet()
                        locks.withLock("hot", 30.seconds) { lock -> lock.fencingToken() }
                    }
                }
                // a waiter blocking its thread would keep every later coroutine from starting
                awaitUntil(20.seconds, "all $WAITERS coroutines wait, one asleep until the release") {
                    started.get() == WAITERS && engine.waitingCount() == 1
                }
                val threadsWhileWaiting = liveThreads()
                println("$WAITERS coroutines waiting on one thread: $threadsBefore threads before, $threadsWhileWaiting while waiting")
                val free = runBlocking { withTimeout(5.seconds) { withContext(oneThread) { Thread.currentThread().name } } }
                assertThat(free).`as`("the one thread runs other work while all wait").startsWith("the-one-thread")
                assertThat(threadsInsideALockWait()).`as`("threads parked in a lock call").isEmpty()
                assertThat(threadsWhileWaiting - threadsBefore).isLessThanOrEqualTo(3)
                assertThat(tokens).noneMatch { it.isCompleted }

                held.close()
                val values = runBlocking { withTimeout(60.seconds) { tokens.awaitAll() } }
                assertIncreasing(values)
                assertThat(redis.server().locked("hot")).isFalse()
            } finally {
                executor.shutdownNow()
            }
        }
    }

    @Test
    fun `tryLock returns null when the wait runs out, and a handle when the key is free`() = bothInstances { locks, _, other ->
        other.lock("busy", java.time.Duration.ofSeconds(5)).use {
            assertThat(runBlocking { locks.tryLock("busy", 100.milliseconds) }).isNull()
            assertThatThrownBy { runBlocking { locks.withLock("busy", 0.seconds) { "ran" } } }
                .isInstanceOf(LockAcquisitionException::class.java).hasMessageContaining("'busy'")
        }
        val lock = runBlocking { locks.tryLock("busy", 5.seconds, leaseTime = 10.seconds) }!!
        assertThat(lock.fencingToken()).isPositive()
        assertThat(lock.remainingLease()).isPositive()
        lock.close()
        assertThat(redis.server().locked("busy")).isFalse()
    }

    @Test
    fun `a cancelled waiter gives up its place and never runs`() = bothInstances { locks, engine, other ->
        val held = other.lock("cancel", java.time.Duration.ofSeconds(5))
        val runs = AtomicInteger()
        runBlocking {
            val cancelled = launch(Dispatchers.Default) { locks.withLock("cancel", 30.seconds) { runs.incrementAndGet() } }
            val next = async(Dispatchers.Default, CoroutineStart.DEFAULT) {
                awaitUntil(10.seconds, "the first waiter waits") { engine.waitingCount() == 1 }
                locks.withLock("cancel", 30.seconds) { lock -> runs.incrementAndGet(); lock.fencingToken() }
            }
            withContext(Dispatchers.IO) {
                awaitUntil(10.seconds, "the first waiter waits") { engine.waitingCount() == 1 }
            }
            cancelled.cancelAndJoin()
            held.close()
            assertThat(withTimeout(30.seconds) { next.await() }).isPositive()
        }
        assertThat(runs.get()).`as`("only the waiter that was not cancelled ran").isEqualTo(1)
        awaitUntil(10.seconds, "the key is free") { !redis.server().locked("cancel") }
    }

    @Test
    fun `the lock is released when the action throws or its coroutine is cancelled`() = bothInstances { locks, _, _ ->
        assertThatThrownBy { runBlocking { locks.withLock("fails", 5.seconds) { error("failed under the lock") } } }
            .hasMessage("failed under the lock")
        assertThat(redis.server().locked("fails")).`as`("released before withLock threw").isFalse()

        runBlocking {
            val inside = CompletableDeferred<Unit>()
            val holder = launch(Dispatchers.Default) {
                locks.withLock("cancelled", 5.seconds) {
                    inside.complete(Unit)
                    CompletableDeferred<Unit>().await() // suspended until cancelled
                }
            }
            inside.await()
            assertThat(redis.server().locked("cancelled")).isTrue()
            holder.cancelAndJoin()
            assertThat(redis.server().locked("cancelled")).`as`("released before the cancelled coroutine ended").isFalse()
        }
    }
}
