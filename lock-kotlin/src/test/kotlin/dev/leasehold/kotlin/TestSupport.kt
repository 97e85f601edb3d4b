package dev.leasehold.kotlin

import dev.leasehold.autoconfigure.LeaseholdAnnotationAutoConfiguration
import dev.leasehold.autoconfigure.LeaseholdAutoConfiguration
import dev.leasehold.test.redis.TestRedisServer
import java.lang.management.ManagementFactory
import kotlin.time.Duration
import kotlin.time.TimeSource
import org.assertj.core.api.Assertions.fail
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner

/** An application with Leasehold's auto-configuration on a real Redis, as the starter gives it. */
internal fun contextOn(redis: TestRedisServer): ApplicationContextRunner = ApplicationContextRunner()
    .withConfiguration(
        AutoConfigurations.of(
            AopAutoConfiguration::class.java, DataRedisAutoConfiguration::class.java,
            LeaseholdAutoConfiguration::class.java, LeaseholdAnnotationAutoConfiguration::class.java,
        ),
    )
    .withPropertyValues("spring.data.redis.host=${redis.host()}", "spring.data.redis.port=${redis.port()}")

internal fun TestRedisServer.locked(logicalKey: String): Boolean = command("EXISTS", "lock:{$logicalKey}") == "1"

/** Waits for a condition with a deadline (never a bare sleep). */
internal fun awaitUntil(timeout: Duration, what: String, condition: () -> Boolean) {
    val deadline = TimeSource.Monotonic.markNow() + timeout
    while (!condition()) {
        if (deadline.hasPassedNow()) {
            fail<Unit>("Timed out after $timeout waiting until $what")
        }
        Thread.sleep(5)
    }
}

internal fun liveThreads(): Int = ManagementFactory.getThreadMXBean().threadCount

/** Threads parked in a blocking lock call: the engine's caller-thread wait, or the aspect's blocking acquire. */
internal fun threadsInsideALockWait(): List<String> = Thread.getAllStackTraces().filter { (_, frames) ->
    frames.any {
        it.className.startsWith("dev.leasehold.engine.CallerThreadSteps") ||
            (it.className == "dev.leasehold.aspect.DistributedLockInterceptor" && it.methodName == "acquire")
    }
}.keys.map { it.name }

internal fun assertIncreasing(tokens: List<Long>) {
    tokens.zipWithNext().forEachIndexed { index, (before, after) ->
        if (after <= before) {
            fail<Unit>("token ${index + 1} ($after) is not above token $index ($before): not served in call order")
        }
    }
}
