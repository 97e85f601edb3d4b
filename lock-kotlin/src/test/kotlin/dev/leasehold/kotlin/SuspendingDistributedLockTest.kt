package dev.leasehold.kotlin

import dev.leasehold.DistributedLock
import dev.leasehold.LockAcquisitionException
import dev.leasehold.LockService
import dev.leasehold.OnLockFailure
import dev.leasehold.engine.DefaultLockEngine
import dev.leasehold.test.redis.RedisServerExtension
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.boot.test.context.assertj.AssertableApplicationContext
import org.springframework.stereotype.Service

/**
 * `@DistributedLock` on Kotlin suspend functions, as Spring supports `@Transactional` on them: the lock is
 * held until the function completes, released when its coroutine is cancelled, and waited for with the
 * coroutine suspended, not its thread.
 */
@Timeout(120)
class SuspendingDistributedLockTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis = RedisServerExtension()
    }

    private fun bothInstances(test: (context: AssertableApplicationContext, other: LockService) -> Unit) {
        contextOn(redis.server()).run { other ->
            contextOn(redis.server()).withBean(Inventory::class.java).run { context ->
                test(context, other.getBean(LockService::class.java))
            }
        }
    }

    @Test
    fun `the lock is held until the suspend function completes`() = bothInstances { context, _ ->
        val inventory = context.getBean(Inventory::class.java)
        runBlocking {
            val gate = CompletableDeferred<Unit>()
            val reservation = async(Dispatchers.Default) { inventory.reserve("a", gate) }
            withContext(Dispatchers.IO) { awaitUntil(10.seconds, "locked while suspended") { redis.server().locked("sku:a") } }
            assertThat(reservation.isCompleted).isFalse()
            gate.complete(Unit)
            assertThat(reservation.await()).`as`("the fencing token, from currentLock()").isPositive()
            assertThat(redis.server().locked("sku:a")).`as`("released before the caller resumed").isFalse()
        }
    }

    @Test
    fun `cancelling the coroutine releases the lock`() = bothInstances { context, _ ->
        val inventory = context.getBean(Inventory::class.java)
        runBlocking {
            val entered = CompletableDeferred<Boolean>()
            val reservation = launch(Dispatchers.Default) { inventory.reserve("b", CompletableDeferred(), entered) }
            assertThat(withTimeout(10.seconds) { entered.await() }).`as`("the function runs under the lock").isTrue()
            reservation.cancelAndJoin()
        }
        awaitUntil(10.seconds, "released after the cancel") { !redis.server().locked("sku:b") }
    }

    @Test
    fun `a busy key throws, skips with an empty value, or falls back to a suspend function`() = bothInstances { context, other ->
        val inventory = context.getBean(Inventory::class.java)
        other.lock("sku:c", java.time.Duration.ofSeconds(5)).use {
            assertThatThrownBy { runBlocking { inventory.reserveNow("c") } }
                .isInstanceOf(LockAcquisitionException::class.java).hasMessageContaining("'sku:c'")
            assertThat(runBlocking { inventory.reservedItems("c") }).`as`("SKIP: an empty list, not null").isEmpty()
            assertThat(runBlocking { inventory.reserveOrFallBack("c") }).isEqualTo("busy sku:c")
        }
        assertThat(inventory.runs()).`as`("the locked functions never ran").isZero()
        assertThat(runBlocking { inventory.reserveNow("c") }).isEqualTo("reserved c")
        assertThat(runBlocking { inventory.reservedItems("c") }).containsExactly("c")
    }

    @Test
    fun `100 suspend calls waiting for a held key on one thread leave that thread free`() = bothInstances { context, other ->
        val inventory = context.getBean(Inventory::class.java)
        val engine = context.getBean(DefaultLockEngine::class.java)
        runBlocking { inventory.token("warm-up") }
        val held = other.lock("sku:hot", java.time.Duration.ofSeconds(5))
        val executor = Executors.newSingleThreadExecutor { Thread(it, "the-one-thread") }
        try {
            val oneThread = executor.asCoroutineDispatcher()
            val started = AtomicInteger()
            val tokens = (0 until 100).map {
                CoroutineScope(oneThread).async {
                    started.incrementAndGet()
                    inventory.token("hot")
                }
            }
            awaitUntil(20.seconds, "all 100 calls wait, one asleep until the release") {
                started.get() == 100 && engine.waitingCount() == 1
            }
            val free = runBlocking { withTimeout(5.seconds) { withContext(oneThread) { Thread.currentThread().name } } }
            assertThat(free).`as`("the one thread runs other work while all wait").startsWith("the-one-thread")
            assertThat(threadsInsideALockWait()).`as`("threads parked in a lock call").isEmpty()

            held.close()
            assertIncreasing(runBlocking { withTimeout(60.seconds) { tokens.awaitAll() } })
            assertThat(redis.server().locked("sku:hot")).isFalse()
        } finally {
            executor.shutdownNow()
        }
    }

    @Service
    class Inventory {

        private val runs = AtomicInteger()

        fun runs(): Int = runs.get()

        @DistributedLock(name = "sku", key = "#sku", waitTime = "5s")
        suspend fun reserve(sku: String, gate: CompletableDeferred<Unit>, entered: CompletableDeferred<Boolean>? = null): Long {
            val token = currentLock()!!.fencingToken()
            entered?.complete(redis.server().locked("sku:$sku"))
            gate.await()
            return token
        }

        @DistributedLock(name = "sku", key = "#sku", waitTime = "30s")
        suspend fun token(sku: String): Long {
            delay(1) // suspends under the lock
            return currentLock()!!.fencingToken()
        }

        @DistributedLock(name = "sku", key = "#sku", waitTime = "0")
        suspend fun reserveNow(sku: String): String {
            runs.incrementAndGet()
            return "reserved $sku"
        }

        @DistributedLock(name = "sku", key = "#sku", waitTime = "0", onFailure = OnLockFailure.SKIP)
        suspend fun reservedItems(sku: String): List<String> {
            runs.incrementAndGet()
            return listOf(sku)
        }

        @DistributedLock(name = "sku", key = "#sku", waitTime = "0", fallback = "busy")
        suspend fun reserveOrFallBack(sku: String): String {
            runs.incrementAndGet()
            return "reserved $sku"
        }

        suspend fun busy(sku: String, failure: LockAcquisitionException): String {
            delay(1)
            return "busy ${failure.key}"
        }
    }
}
