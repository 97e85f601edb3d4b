/** Null-safe by default: every type here is non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.leasehold.test.redis;

import org.jspecify.annotations.NullMarked;
