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

    /**
     * The static part of the lock key.
     * @return the name; empty for the declaring class's fully qualified name + "." + the method name
     */
    String name() default "";

    /**
     * SpEL over the arguments ({@code #id}, {@code #p0}, {@code #a0}, {@code #order.id}, {@code #root.method},
     * {@code @bean}); a Collection/array result locks every element (multi-lock, all or nothing).
     * @return the SpEL expression; empty for a key of {@link #name()} alone
     */
    String key() default "";

    /**
     * How long to wait for the lock.
     * @return "" for {@code leasehold.wait-time}; "0" for one try; a duration such as "500ms", "5s", "PT5S",
     * or a placeholder "${prop}"
     */
    String waitTime() default "";

    /**
     * The lease of the lock.
     * @return "" for a lease renewed by the watchdog while the method runs; a duration for a fixed lease,
     * never renewed
     */
    String leaseTime() default "";

    /**
     * How the lock is shared.
     * @return {@link LockMode#EXCLUSIVE}, {@link LockMode#READ} or {@link LockMode#WRITE}
     */
    LockMode mode() default LockMode.EXCLUSIVE;

    /**
     * What to do when the lock cannot be taken within the wait.
     * @return {@link OnLockFailure#THROW} (a {@link LockAcquisitionException}) or {@link OnLockFailure#SKIP}
     */
    OnLockFailure onFailure() default OnLockFailure.THROW;

    /**
     * A method called instead when the lock is not taken.
     * @return the name of a method on the same bean with the same parameters; empty for none
     */
    String fallback() default "";

    /**
     * "" = none; a duration ("30s", "PT30S", "${prop}"): the lock stays taken until this long after it was
     * acquired, even when the method returned sooner (the release sets the key's TTL to the time left
     * instead of deleting it). For a {@code @Scheduled} job that must run once per period across
     * instances: a node whose scheduler fires a little later finds the key still taken. Must not be longer
     * than a fixed {@link #leaseTime()}; a bad value fails startup like {@link #waitTime()}.
     * @return "" for none, or the shortest time the key stays taken after the grant
     */
    String holdAtLeast() default "";
}
