// The Kotlin example of docs/async.md: the page shows the tagged region "shipping" below (lines ending in
// docs:hide left out), and the docs module checks that they are equal. Compiled, never run.
package dev.leasehold.kotlin.docs

import dev.leasehold.DistributedLock
import dev.leasehold.LockService
import java.time.LocalDate
import org.springframework.stereotype.Service
// tag::shipping[]
import dev.leasehold.kotlin.currentLock
import dev.leasehold.kotlin.tryLock
import dev.leasehold.kotlin.withLock
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.future.await

@Service                                     // open for Spring's proxy (the kotlin-spring compiler plugin)
class Shipping(private val locks: LockService, private val orders: OrderClient) {

    @DistributedLock(name = "order", key = "#id")
    suspend fun ship(id: Long): Shipment {   // held until it completes; released if its coroutine is cancelled
        val token = currentLock()!!.fencingToken()
        return orders.ship(id, token)        // suspends under the lock
    }

    suspend fun rebuild(day: LocalDate) =
        locks.withLock("report:$day", 5.seconds) { lock -> build(day, lock.fencingToken()) }

    suspend fun rebuildIfIdle(day: LocalDate) =
        locks.tryLock("report:$day", 0.seconds)?.let { lock -> try { build(day, lock.fencingToken()) } finally { lock.closeAsync().await() } }
    private fun build(day: LocalDate, fencingToken: Long): String = "$day:$fencingToken" // docs:hide
}
// end::shipping[]

interface OrderClient {
    suspend fun ship(id: Long, fencingToken: Long): Shipment
}

data class Shipment(val orderId: Long, val fencingToken: Long)
