/**
 * Leasehold's public API: distributed locks on Redis for Spring Boot.
 * <p>
 * Put {@link dev.leasehold.DistributedLock @DistributedLock} on a bean method, or inject
 * {@link dev.leasehold.LockService} (or {@link dev.leasehold.ReactiveLockService}) and lock by hand; every
 * grant is a {@link dev.leasehold.LockHandle} with a fencing token. The starter
 * {@code dev.leasehold:leasehold-spring-boot-starter} configures all of it from {@code spring.data.redis.*}
 * and {@code leasehold.*} properties.
 * <p>
 * This package is the whole public API, and it only grows: a release may add to it, never change or remove
 * what is here (the build compares it with a committed baseline). Its subpackages are internal and may
 * change in any release.
 */
@NullMarked
package dev.leasehold;

import org.jspecify.annotations.NullMarked;
