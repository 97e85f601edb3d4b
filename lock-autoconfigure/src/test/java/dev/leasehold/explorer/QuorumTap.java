package dev.leasehold.explorer;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.LockMode;
import dev.leasehold.engine.ForwardingLockServer;
import dev.leasehold.engine.quorum.QuorumLockServer;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.QueueTry;

/**
 * The engine's side of a quorum run: the real {@link QuorumLockServer}, unchanged, and what its verdicts told the
 * engine. In a quorum a node's answer tells the engine nothing by itself (a node may refuse a renewal a majority
 * confirms), so what the checks read of Redis's word is recorded here, as delivered by the quorum: the fencing tokens
 * its grants and reservations handed out ({@code issued}, one list for every instance of the run, in the
 * order the quorum decided them, each with when its call began: the server-side S2 of a quorum) and the renewals and reservations it answered ({@link RedisSaid}).
 * Every call returns the quorum server's own future (its take-back knows its own acquires by their type); the steps
 * it does not record are forwarded as they are ({@link ForwardingLockServer}).
 */
final class QuorumTap extends ForwardingLockServer {

    private final QuorumLockServer quorum;

    private final SimWorld world;

    final RedisSaid said = new RedisSaid();

    private final List<SimRedis.Issued> issued;

    private final String instance;

    private final QuorumValidity validity;

    QuorumTap(QuorumLockServer quorum, SimWorld world, List<SimRedis.Issued> issued, String instance,
            QuorumValidity validity) {
        super(quorum);
        this.quorum = quorum;
        this.world = world;
        this.issued = issued;
        this.instance = instance;
        this.validity = validity;
    }

    /** Where a lease confirmed by a step sent at {@code sentAt} (history time) ends for its holder. */
    private long validUntil(long sentAt, long leaseMillis) {
        return sentAt + quorum.validMillis(leaseMillis) * 1_000_000L;
    }

    QuorumLockServer quorum() {
        return quorum;
    }

    /** Handed out now by a call that began at {@code since} (history time): above all handed out before that. */
    private void issued(String key, long first, long last, long since) {
        synchronized (issued) {
            issued.add(new SimRedis.Issued(key, first, last, world.elapsed(), since));
        }
    }

    @Override
    public CompletableFuture<Grant> acquire(LockKeys keys, LockMode mode, String token, long leaseMillis,
            long writerWaitingMillis, String waiterId, QueueTry queueTry) {
        long since = world.elapsed();
        CompletableFuture<Grant> reply = quorum.acquire(keys, mode, token, leaseMillis, writerWaitingMillis, waiterId,
                queueTry);
        reply.whenComplete((grant, error) -> {
            if (grant != null && grant.granted()) {
                said.ran(token, grant, world.now());
                // two readers whose calls overlap may share a token (each majority counted before the other's raise):
                // a token is judged against those handed out before its call began
                issued(keys.logicalKey(), grant.fencingToken(), Math.max(grant.fencingToken(), grant.reservedThrough()),
                        since);
                validity.granted(instance, keys.logicalKey(), token, mode == LockMode.READ, since, world.elapsed(),
                        validUntil(since, leaseMillis));
            }
        });
        return reply;
    }

    @Override
    public void takeBack(CompletableFuture<Grant> acquire, LockKeys keys, LockMode mode, String token) {
        validity.ended(token, world.elapsed());
        quorum.takeBack(acquire, keys, mode, token);
    }

    @Override
    public CompletableFuture<FenceBlock> reserveFences(LockKeys keys, String token, long leaseMillis) {
        long sentAt = world.now();
        CompletableFuture<FenceBlock> reply = quorum.reserveFences(keys, token, leaseMillis);
        reply.whenComplete((block, error) -> {
            if (error != null) {
                return;
            }
            if (block == null) {
                said.reservationGone(keys.logicalKey(), token, sentAt, world.now());
                validity.ended(token, world.elapsed());
            }
            else {
                said.ran(token, block, world.now());
                validity.confirmed(token, validUntil(sentAt - world.now() + world.elapsed(), leaseMillis));
                issued(keys.logicalKey(), block.first(), block.last(), sentAt - world.now() + world.elapsed());
            }
        });
        return reply;
    }

    @Override
    public CompletableFuture<Boolean> renew(LockKeys keys, LockMode mode, String token, long leaseMillis) {
        long sentAt = world.now();
        CompletableFuture<Boolean> reply = quorum.renew(keys, mode, token, leaseMillis);
        reply.whenComplete((renewed, error) -> {
            if (renewed != null) {
                said.renewalDelivered(keys.logicalKey(), token, renewed, sentAt, world.now());
                if (renewed) {
                    validity.confirmed(token, validUntil(sentAt - world.now() + world.elapsed(), leaseMillis));
                }
                else {
                    validity.ended(token, world.elapsed());
                }
            }
        });
        return reply;
    }

    @Override
    public int renewalsPerCall() {
        return quorum.renewalsPerCall();
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token) {
        return release(keys, mode, token, 0);
    }

    @Override
    public CompletableFuture<Boolean> release(LockKeys keys, LockMode mode, String token, long keepMillis) {
        validity.ended(token, world.elapsed());
        long sentAt = world.now();
        CompletableFuture<Boolean> reply = keepMillis > 0 ? quorum.release(keys, mode, token, keepMillis)
                : quorum.release(keys, mode, token);
        // the quorum's verdict; a release "ran" on its nodes somewhere after its send: judged from the send
        reply.whenComplete((released, error) -> {
            if (Boolean.FALSE.equals(released)) {
                said.releaseRefused(keys.logicalKey(), token, sentAt, world.now());
            }
            else if (Boolean.TRUE.equals(released)) {
                said.releaseAccepted(keys.logicalKey(), token, sentAt, world.now());
            }
        });
        return reply;
    }
}
