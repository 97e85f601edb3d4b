package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockServer.FenceBlock;

/**
 * What Redis told one instance about its leases, as delivered to the engine (a reply the explorer lost or dropped
 * told it nothing): which fencing tokens each owner token's grants and reservations reserved, the renewals it
 * refused, the reservations it answered with "not yours" and the releases it answered with "not held". The lost-key excuse of the checker (a holder learns a
 * loss only from the next answer about its lease) ends where such an answer reached the engine: {@link RunCheck}
 * judges what the engine did after it. Synchronized: the explorer records, engine threads never touch it.
 */
final class RedisSaid {

    /** An answer that said the owner token no longer held the key, delivered at {@code at} (sent at {@code sentAt}). */
    record Gone(String key, String token, long sentAt, long at) {
    }

    /** Fencing tokens reserved under each owner token: [first, last] ranges. */
    private final Map<String, List<long[]>> blocks = new HashMap<>();

    final List<Gone> refusedRenewals = new ArrayList<>();

    final List<Gone> goneReservations = new ArrayList<>();

    /** Releases Redis answered with "not held" (the lease had run out, or the key was lost). */
    final List<Gone> refusedReleases = new ArrayList<>();

    /** A release Redis answered with "released": run on the server at {@code ranAt}, delivered at {@code at}. */
    record Released(String key, String token, long ranAt, long at) {
    }

    final List<Released> acceptedReleases = new ArrayList<>();

    /** When the engine was done reading each refused renewal (its watchdog ran what the answer scheduled). */
    final Map<Gone, Long> processedAt = new HashMap<>();

    /** Refusals the engine is done reading by {@code now}: {@code read} says so of each one not marked yet. */
    synchronized void read(java.util.function.Predicate<Gone> read, long now) {
        for (Gone refused : refusedRenewals) {
            if (!processedAt.containsKey(refused) && read.test(refused)) {
                processedAt.put(refused, now);
            }
        }
    }

    /** Whether the engine read a renewal of {@code key} refused at or after {@code since}. */
    synchronized boolean refusalReadSince(String key, long since) {
        return processedAt.entrySet().stream()
            .anyMatch(read -> read.getKey().key().equals(key) && read.getKey().at() - since >= 0);
    }

    /** Per owner token, when a renewal Redis accepted was delivered (the engine clears its unconfirmed holders then). */
    private final Map<String, List<Long>> confirmed = new HashMap<>();

    /** When Redis last granted or reserved under each owner token (virtual ns): it confirmed the lease then. */
    private final Map<String, Long> lastReservedAt = new HashMap<>();

    /** A step ran on the server at {@code at}: a grant or a reservation reserves tokens under its owner token. */
    synchronized void ran(String token, Object result, long at) {
        if (token == null) {
            return;
        }
        if (result instanceof Grant grant && grant.granted() || result instanceof FenceBlock) {
            lastReservedAt.put(token, at);
        }
        if (result instanceof Grant grant && grant.granted()) {
            blocks.computeIfAbsent(token, any -> new ArrayList<>())
                .add(new long[] { grant.fencingToken(), Math.max(grant.fencingToken(), grant.reservedThrough()) });
        }
        if (result instanceof FenceBlock block) {
            blocks.computeIfAbsent(token, any -> new ArrayList<>()).add(new long[] { block.first(), block.last() });
        }
    }

    synchronized void renewalDelivered(String key, String token, boolean renewed, long sentAt, long at) {
        if (renewed) {
            confirmed.computeIfAbsent(token, any -> new ArrayList<>()).add(at);
        }
        else {
            refusedRenewals.add(new Gone(key, token, sentAt, at));
        }
    }

    synchronized void releaseAccepted(String key, String token, long ranAt, long at) {
        acceptedReleases.add(new Released(key, token, ranAt, at));
    }

    synchronized void releaseRefused(String key, String token, long sentAt, long at) {
        refusedReleases.add(new Gone(key, token, sentAt, at));
    }

    synchronized void reservationGone(String key, String token, long sentAt, long at) {
        goneReservations.add(new Gone(key, token, sentAt, at));
    }

    /** Whether {@code fencingToken} came from a block reserved under {@code token}. */
    synchronized boolean underLease(String token, long fencingToken) {
        return blocks.getOrDefault(token, List.of()).stream()
            .anyMatch(range -> range[0] <= fencingToken && fencingToken <= range[1]);
    }

    /** Whether {@code fencingToken} is the first of a block reserved under {@code token} (Redis confirmed it then). */
    synchronized boolean firstOfBlock(String token, long fencingToken) {
        return blocks.getOrDefault(token, List.of()).stream().anyMatch(range -> range[0] == fencingToken);
    }

    /** When Redis last granted or reserved tokens under the owner token (virtual ns), Long.MIN_VALUE if never. */
    synchronized long lastReservedAt(String token) {
        return lastReservedAt.getOrDefault(token, Long.MIN_VALUE);
    }

    synchronized long lastConfirmedBefore(String token, long at) {
        return confirmed.getOrDefault(token, List.of()).stream().mapToLong(Long::longValue).filter(each -> each <= at)
            .max().orElse(Long.MIN_VALUE);
    }
}
