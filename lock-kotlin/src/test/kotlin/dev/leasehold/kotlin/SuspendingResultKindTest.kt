package dev.leasehold.kotlin

import dev.leasehold.DistributedLock
import dev.leasehold.LockHandle
import dev.leasehold.LockService
import dev.leasehold.engine.LockObserver
import dev.leasehold.LockMode
import dev.leasehold.test.redis.RedisServerExtension
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.boot.test.context.assertj.AssertableApplicationContext
import org.springframework.transaction.TransactionDefinition
import org.springframework.transaction.support.AbstractPlatformTransactionManager
import org.springframework.transaction.support.DefaultTransactionStatus
import org.springframework.transaction.support.TransactionTemplate

/**
 * The suspend-function kind of result (see `ResultKindsTest` in the autoconfigure module for the plain,
 * `CompletionStage`, `Mono` and `Flux` kinds): the same annotation waits the same way. Redis errors inside
 * the wait are tried again until it ends; the caller's own key is re-entered; a caller's `withTimeout` stops
 * the wait and leaves nothing held; within an open transaction the lock is held until it completed.
 */
@Timeout(120)
class SuspendingResultKindTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis = RedisServerExtension()
    }

    private fun bothInstances(test: (context: AssertableApplicationContext, other: LockService) -> Unit) {
        contextOn(redis.server()).run { other ->
            contextOn(redis.server()).withPropertyValues("leasehold.redis-timeout=300ms")
                .withBean(Calls::class.java).withBean(Waits::class.java).run { context ->
                    test(context, other.getBean(LockService::class.java))
                }
        }
    }

    @Test
    fun `Redis errors inside the wait are tried again until the wait ends`() = bothInstances { context, _ ->
        val calls = context.getBean(Calls::class.java)
        assertThat(runBlocking { calls.suspending(listOf("errors")) }).isEqualTo("ran") // connected
        redis.server().pause()
        val pausedAt = TimeSource.Monotonic.markNow()
        val resumer = Thread {
            awaitUntil(10.seconds, "800 ms passed") { pausedAt.elapsedNow() > 800.milliseconds }
            redis.server().resume()
        }.apply { start() }
        assertThat(runBlocking { calls.suspending(listOf("errors")) }).isEqualTo("ran")
        assertThat(pausedAt.elapsedNow()).isGreaterThan(700.milliseconds)
        resumer.join()
    }

    @Test
    fun `the caller's own key is re-entered while a later key is waited for`() = bothInstances { context, other ->
        val calls = context.getBean(Calls::class.java)
        val locks = context.getBean(LockService::class.java)
        val elsewhere = other.lock("kinds:busy", java.time.Duration.ofSeconds(10))
        val releaser = Thread {
            val heldAt = TimeSource.Monotonic.markNow()
            awaitUntil(10.seconds, "300 ms passed") { heldAt.elapsedNow() > 300.milliseconds }
            elsewhere.close()
        }.apply { start() }
        locks.lock("kinds:own", java.time.Duration.ofSeconds(10)).use { outer ->
            // runBlocking on this thread: the suspend call subscribes here, where "kinds:own" is held
            assertThat(runBlocking { withTimeout(15.seconds) { calls.suspending(listOf("own", "busy")) } }).isEqualTo("ran")
            assertThat(outer.isHeld).isTrue()
        }
        releaser.join()
        awaitUntil(10.seconds, "both keys free") { !locks.isLocked("kinds:own") && !locks.isLocked("kinds:busy") }
    }

    @Test
    fun `a caller's withTimeout stops the wait and nothing is left held`() = bothInstances { context, other ->
        val calls = context.getBean(Calls::class.java)
        val waits = context.getBean(Waits::class.java)
        val held = other.lock("kinds:gives-up", java.time.Duration.ofSeconds(10))
        assertThatThrownBy { runBlocking { withTimeout(1.seconds) { calls.suspending(listOf("gives-up")) } } }
            .isInstanceOf(TimeoutCancellationException::class.java)
        awaitUntil(8.seconds, "every wait for the key ended with the caller") {
            waits.started("kinds:gives-up") > 0 && waits.ended("kinds:gives-up") == waits.started("kinds:gives-up")
        }
        held.close()
        val again = other.tryLock("kinds:gives-up", java.time.Duration.ofSeconds(5), null)
        assertThat(again).`as`("nothing held for the caller that gave up").isPresent
        again.get().close()
        assertThat(calls.ran()).isZero()
    }

    @Test
    fun `within an open transaction the lock is held until the transaction completed`() = bothInstances { context, other ->
        val calls = context.getBean(Calls::class.java)
        val takenBeforeCommit = TransactionTemplate(ResourcelessTransactions()).execute {
            assertThat(runBlocking { calls.suspending(listOf("transaction")) }).isEqualTo("ran")
            other.tryLock("kinds:transaction", java.time.Duration.ofSeconds(1), null)
        }!!
        takenBeforeCommit.ifPresent(LockHandle::close)
        assertThat(takenBeforeCommit).`as`("another instance got the key before the commit").isEmpty
        val afterCommit = other.tryLock("kinds:transaction", java.time.Duration.ofSeconds(10), null)
        assertThat(afterCommit).`as`("released once the transaction completed").isPresent
        afterCommit.get().close()
    }

    open class Calls {

        private val ran = AtomicInteger()

        open fun ran(): Int = ran.get()

        @DistributedLock(name = "kinds", key = "#keys", waitTime = "20s")
        open suspend fun suspending(keys: List<String>): String {
            ran.incrementAndGet()
            return if (currentLock() != null) "ran" else "ran without its lock"
        }
    }

    /** This application's waits per key, as a LockObserver bean sees them. */
    class Waits : LockObserver {

        private val started = ConcurrentHashMap<String, AtomicInteger>()

        private val ended = ConcurrentHashMap<String, AtomicInteger>()

        fun started(key: String): Int = started.computeIfAbsent(key) { AtomicInteger() }.get()

        fun ended(key: String): Int = ended.computeIfAbsent(key) { AtomicInteger() }.get()

        override fun waitStarted(key: String, mode: LockMode): LockObserver.Attempt {
            started.computeIfAbsent(key) { AtomicInteger() }.incrementAndGet()
            val end = { ended.computeIfAbsent(key) { AtomicInteger() }.incrementAndGet(); Unit }
            return object : LockObserver.Attempt {
                override fun granted(fencingToken: Long) = end()
                override fun timedOut() = end()
                override fun failed(error: Throwable) = end()
                override fun cancelled() = end()
            }
        }
    }

    /** A transaction manager with no resource: Spring's own transaction handling, synchronizations included. */
    class ResourcelessTransactions : AbstractPlatformTransactionManager() {
        override fun doGetTransaction(): Any = Any()
        override fun doBegin(transaction: Any, definition: TransactionDefinition) {}
        override fun doCommit(status: DefaultTransactionStatus) {}
        override fun doRollback(status: DefaultTransactionStatus) {}
    }
}
