package dev.leasehold.kotlin

import dev.leasehold.LockMode
import dev.leasehold.LockService
import dev.leasehold.observation.LockObservationContext.Outcome
import dev.leasehold.observation.LockWaitContext
import java.time.Duration
import java.util.Optional
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * Leasehold's Java packages are `@NullMarked` (JSpecify) with `@Nullable` where null is allowed, and the Kotlin
 * compiler reads them: Leasehold types are `String` or `Outcome?` in Kotlin, not platform types (`String!`).
 * The compiler's choice between two overloads shows which one it sees: for a platform type it picks the
 * non-null one, for a `@Nullable` result only the nullable one applies.
 */
class NullSafetyTest {

    private fun seenAs(@Suppress("UNUSED_PARAMETER") value: Any?) = "nullable"

    @JvmName("seenAsNonNull")
    private fun seenAs(@Suppress("UNUSED_PARAMETER") value: Any) = "non-null"

    @Test
    fun `a result that may be null is nullable in Kotlin, one that may not is not`() {
        val context = LockWaitContext("orders:42", "orders", LockMode.EXCLUSIVE)
        assertThat(seenAs(context.outcome)).isEqualTo("nullable") // a platform type would pick "non-null"
        assertThat(seenAs(context.lockName)).isEqualTo("non-null")
        context.setOutcome(Outcome.ACQUIRED)
        assertThat(context.outcome?.name).isEqualTo("ACQUIRED")
    }

    @Test
    fun `a null lease compiles where the contract allows it`() {
        val lease: Duration? = null
        // a fixed lease or null (renewed by the watchdog): Kotlin accepts the Duration? as it is
        val call: (LockService) -> Optional<*> = { service -> service.tryLock("report", Duration.ZERO, lease) }
        assertThat(call).isNotNull()
    }
}
