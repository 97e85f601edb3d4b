package dev.leasehold;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock on Redis.
 * <p>
 * The logical key is {@link #name()} when {@link #key()} is empty, else {@code name + ":" + value} where
 * value is the SpEL result rendered as text; so {@code @DistributedLock(name = "order", key = "#id")} with
 * id 42 and {@code lockService.lock("order:42", ...)} are the same lock.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

    /** Static part of the lock key; default: declaring class FQN + "." + method name. */
    String name() default "";

    /**
     * SpEL over the arguments ({@code #id}, {@code #p0}, {@code #a0}, {@code #order.id}, {@code #root.method},
     * {@code @bean}); a Collection/array result locks every element (multi-lock, all or nothing).
     */
    String key() default "";

    /** "" = {@code leasehold.wait-time}; "0" = one try; "500ms", "5s", "PT5S", "${prop}". */
    String waitTime() default "";

    /** "" = watchdog-renewed lease; a duration = fixed lease, no renewal. */
    String leaseTime() default "";

    /** EXCLUSIVE, READ or WRITE. */
    LockMode mode() default LockMode.EXCLUSIVE;

    /** What to do when the lock cannot be taken within the wait. */
    OnLockFailure onFailure() default OnLockFailure.THROW;

    /** Name of a method on the same bean with the same parameters, called instead when the lock is not taken. */
    String fallback() default "";

    /**
     * "" = none; a duration ("30s", "PT30S", "${prop}"): the lock stays taken until this long after it was
     * acquired, even when the method returned sooner (the release sets the key's TTL to the time left
     * instead of deleting it). For a {@code @Scheduled} job that must run once per period across
     * instances: a node whose scheduler fires a little later finds the key still taken. Must not be longer
     * than a fixed {@link #leaseTime()}; a bad value fails startup like {@link #waitTime()}.
     */
    String holdAtLeast() default "";
}
