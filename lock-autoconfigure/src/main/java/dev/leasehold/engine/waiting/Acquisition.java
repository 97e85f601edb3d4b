package dev.leasehold.engine.waiting;

import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.engine.key.HeldLock;
import dev.leasehold.engine.key.KeyLine;
import dev.leasehold.engine.key.Turn;
import dev.leasehold.engine.key.Waiter;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.LockServerException;
import dev.leasehold.engine.support.EngineClock;

import org.jspecify.annotations.Nullable;

/**
 * One wait for a lock, from joining the key's local queue to the grant or giving up, as a chain of steps
 * that never block: each waits for one thing (its turn in the key's line, a Redis reply, the subscription's
 * confirmation, a release message, a timer) bounded by a timer, and then runs on the thread that ended
 * the wait. Steps run one at a time, so the fields below need no locking; only {@link #cancel()} and
 * shutdown come from outside, and both just end the current wait early ({@link #wakeUp()}).
 * <p>
 * The head of the local queue talks to Redis: try, and until granted or out of time, sleep until a
 * release message, the blocker's lease end or its own deadline, then try again. On a server that
 * {@link LockServer#queuesWaiters() queues waiters}, a refused try puts this instance in the key's fair
 * queue in Redis (one entry per instance: on a Cluster kept by every try, at least every refresh interval; on one
 * server kept while it sleeps, see {@link WaitContext#sleepingInQueue()}); the release that makes it the head grants it the key and wakes this
 * instance alone, on its own channel, and the next try claims the key. A waiter that gives up takes its
 * entry, and a grant it did not claim, back ({@link LockServer#withdraw}).
 */
final class Acquisition {

    private final WaitContext context;

    private final LockKeys keys;
    private final LockMode mode;
    private final long leaseMillis;
    private final boolean renewed;

    /** Only an exclusive watchdog lock can be handed over by a local holder ({@link LocalHandOff}). */
    private final @Nullable LockMode takeOverMode;

    private final @Nullable Thread owner;
    private final long startedAt;
    private final long waitNanos;
    private final long deadline;
    /** This key's state in this JVM: the local queue this acquisition waits in first. */
    private final KeyLine line;

    private final Consumer<Acquisition> ended;

    /** One id per instance: its queue entry (and writer mark) is the instance's, whichever acquisition waits. */
    private final String waiterId;
    private final boolean queues;
    /** The channel a release of the key reaches this acquisition on, once it was refused. */
    private final ReleaseWatch releases;

    /** The lock, or null when the wait ran out; cancelled (exceptionally) by {@link #cancel()}. */
    private final CompletableFuture<HeldLock> result = new CompletableFuture<>();

    private final Waits waits;

    /** What observers follow of this acquisition (and of its hold, once granted). */
    private final LockObserver.Attempt attempt;

    // the loop's state: steps run one at a time, each after the one before (a happens-before edge)
    private @Nullable Waiter waiter;
    private boolean haveTurn;
    /** What its tries sent, and left behind in Redis. */
    private final Tries tries;
    private final TryFailures failures = new TryFailures();
    /** Made at the first refused try: most acquisitions never wait, and pay nothing for it. */
    private @Nullable BetweenTries betweenTries;

    /** Whether it succeeded or ended: a step that fails after that must not give anything back twice. */
    private volatile boolean done;

    /** The last fencing token the grant reserved for hand-offs. */
    private long reservedThrough;

    Acquisition(WaitContext context, LockKeys keys, LockMode mode, long waitNanos, @Nullable Long fixedLeaseMillis,
            @Nullable Thread owner, Executor steps, Consumer<Acquisition> ended) {
        this.context = context;
        this.ended = ended;
        this.keys = keys;
        this.mode = mode;
        this.owner = owner;
        this.startedAt = EngineClock.nanoTime();
        this.waitNanos = waitNanos;
        this.deadline = startedAt + waitNanos;
        this.renewed = fixedLeaseMillis == null;
        this.leaseMillis = fixedLeaseMillis == null ? context.settings.leaseTime().toMillis() : Math.max(1, fixedLeaseMillis);
        this.takeOverMode = mode != LockMode.READ && renewed ? mode : null;
        this.waiterId = context.tokens.instanceId();
        this.queues = context.server.queuesWaiters();
        this.tries = new Tries(context, keys, mode, leaseMillis, waiterId, queues);
        // the channel's name is made only once a try was refused (most acquisitions never wait)
        this.releases = new ReleaseWatch(context.signals,
                () -> queues ? FairQueue.waiterChannel(keys, waiterId) : keys.channel());
        // steps run on the blocking caller's own thread (CallerThreadSteps), or the engine's wait thread
        this.waits = new Waits(context, this::stopping, steps, this::failed);
        this.line = context.lines.join(keys.logicalKey());
        this.attempt = context.observer.waitStarted(keys.logicalKey(), mode); // on the caller's thread
    }

    /** Completes with the lock, or null when the wait ran out; exceptionally with a {@link LockAcquisitionException}. */
    CompletableFuture<HeldLock> result() {
        return result;
    }

    /**
     * Stops waiting: true when the acquisition ends without a lock (whatever it may have been granted is
     * taken back, and it leaves the local queue); false when it had already ended (its result says how).
     */
    boolean cancel() {
        if (result.completeExceptionally(new CancellationException("gave up waiting for '" + keys.logicalKey() + "'"))) {
            wakeUp();
            return true;
        }
        return false;
    }

    /** Ends the current wait now (a cancel, or shutdown): the next step sees why. */
    void wakeUp() {
        waits.wakeUp();
    }

    /** Whether it is over: granted, or gave back everything it had (its turn, its place in Redis). */
    boolean ended() {
        return done;
    }

    void begin() {
        waits.run(this::enterGate);
    }

    private boolean stopping() {
        return result.isDone() || context.shutdown.isDone();
    }

    private void enterGate() {
        waiter = line.enter(takeOverMode, owner);
        then(until(waiter.turn(), deadline - EngineClock.nanoTime()), this::turnCame);
    }

    private void turnCame() {
        Turn turn = line.giveUp(Objects.requireNonNull(waiter, "queued")); // the turn if it came, else out of the queue
        waiter = null;
        if (turn == null) {
            if (stopping()) {
                stop();
            }
            else {
                end(null);
            }
            return;
        }
        haveTurn = true;
        HeldLock handedOver = turn.handedOver();
        if (handedOver == null) {
            attempt();
            return;
        }
        thenWith(context.holdings.takeOver(line, handedOver, event -> until(event, context.settings.redisTimeout().toNanos())),
                taken -> {
                    if (taken != null) {
                        succeed(taken, false);
                    }
                    else {
                        attempt(); // it could not be taken over: this waiter keeps its turn and asks Redis
                    }
                });
    }

    /** The top of the queue-head loop. */
    private void attempt() {
        if (stopping()) {
            stop();
            return;
        }
        if (releases.lapsed()) {
            then(until(releases.subscribe(), context.replyWaitNanos(deadline)), this::sendTry);
            return;
        }
        sendTry();
    }

    private void sendTry() {
        if (stopping()) {
            stop();
            return;
        }
        releases.beforeTry();
        then(waits.untilReply(tries.send(deadline), context.settings.redisTimeout().toNanos()), this::replied);
    }

    private void replied() {
        CompletableFuture<Grant> reply = tries.reply();
        Grant grant = null;
        if (reply.isDone() && !reply.isCompletedExceptionally()) {
            grant = reply.join();
            failures.answered();
        }
        else {
            failures.failed(reply.isDone() ? LockServerException.unwrap(reply.handle((ignored, error) -> error).join())
                    : stopping() ? null : new LockServerException(LockServerException.Kind.NO_REPLY,
                            "no reply within leasehold.redis-timeout (" + context.settings.redisTimeout() + ")", null),
                    tries.sentAt());
            // not learned, or the caller gives up while the write is on its way: take it back after it
            context.takeBackAfter(reply, keys, mode, tries.token());
        }
        if (grant != null && grant.granted()) {
            if (context.shutdown.isDone()) {
                context.server.release(keys, mode, tries.token());
                stop();
                return;
            }
            HeldLock lock = new HeldLock(keys, mode, tries.token(), grant.fencingToken(), owner, renewed, leaseMillis,
                    context.server.validMillis(leaseMillis), tries.sentAt(), takeOverMode != null && context.server.reservesFences());
            reservedThrough = grant.reservedThrough();
            succeed(lock, true);
            return;
        }
        tries.notGranted(grant);
        if (grant != null && tries.joinedQueue()) {
            betweenTries().triedInQueue(tries.sentAt(), grant.blockedForMillis());
        }
        else if (betweenTries != null) {
            betweenTries.forget();
        }
        if (stopping()) {
            stop();
            return;
        }
        long leftNanos = deadline - EngineClock.nanoTime();
        // a wait without a time limit ends once its tries failed for a whole lease, rather than block for ever
        boolean unreachable = waitNanos >= WaitContext.UNBOUNDED_WAIT_NANOS
                && failures.failingFor(context.settings.leaseTime());
        if (leftNanos <= 0 || unreachable) {
            end(failures.failing() ? failures.error(keys.logicalKey(), leftNanos > 0, context.settings.leaseTime()) : null);
            return;
        }
        if (grant == null) {
            // Redis is failing: back off, bounded by the deadline (no busy loop)
            then(until(null, TimeUnit.MILLISECONDS.toNanos(failures.nextBackoffMillis(leftNanos))), this::attempt);
            return;
        }
        Grant refused = grant;
        if (!releases.registered()) {
            then(until(releases.subscribe(), context.replyWaitNanos(deadline)), () -> {
                if (!releases.coversLastTry()) {
                    // newly subscribed: a release between the try and the subscription was not seen, so try again
                    attempt();
                }
                else {
                    // already subscribed before the try: any release since then completes `release`
                    sleep(refused);
                }
            });
            return;
        }
        sleep(refused);
    }

    private void sleep(Grant refused) {
        betweenTries().sleep(refused, tries.keptPlace());
    }

    private BetweenTries betweenTries() {
        BetweenTries between = betweenTries;
        if (between == null) {
            between = new BetweenTries(context, keys, waiterId, mode != LockMode.READ, deadline, releases, waits,
                    this::stopping, this::attempt);
            betweenTries = between;
        }
        return between;
    }

    private CompletableFuture<Void> until(@Nullable CompletableFuture<?> event, long timeoutNanos) {
        return waits.until(event, timeoutNanos);
    }

    private void then(CompletableFuture<Void> wait, Runnable next) {
        waits.then(wait, next);
    }

    private <T> void thenWith(CompletableFuture<T> outcome, Consumer<T> next) {
        waits.thenWith(outcome, next);
    }

    /** A step failed (a bug): it must not leave the caller waiting for ever, nor the queue stuck. */
    private void failed(Throwable ex) {
        end(new LockAcquisitionException(keys.logicalKey(), "Could not lock '" + keys.logicalKey()
                + "': unexpected failure while waiting (" + ex + ")", ex));
    }

    /** Ends because of a cancel or shutdown. */
    private void stop() {
        end(context.shutdown.isDone() && !result.isDone() ? WaitContext.shuttingDown(keys.logicalKey()) : null);
    }

    /** @param fromRedis granted by Redis (the line learns it), not taken over from a local holder */
    private void succeed(HeldLock lock, boolean fromRedis) {
        done = true;
        releases.close();
        if (fromRedis) {
            line.granted(lock, reservedThrough); // a reader passes the turn on: readers share the key
        }
        ended.accept(this);
        context.observer.acquired(keys.logicalKey(), mode, EngineClock.nanoTime() - startedAt);
        lock.attempt = attempt; // its hold ends at release or loss (LockEndings)
        attempt.granted(lock.fencingToken());
        if (!result.complete(lock)) {
            context.holdings.releaseUnclaimed(lock); // cancelled meanwhile: released as if closed (or handed on)
        }
    }

    /** Ends without a lock: the wait ran out (null), or an error. */
    private void end(@Nullable LockAcquisitionException error) {
        if (done) {
            return;
        }
        done = true;
        releases.close();
        CompletableFuture<Void> withdrawSent = tries.withdraw();
        boolean joined = true;
        if (waiter != null) { // only when a step failed while queued
            Turn turn = line.giveUp(waiter);
            if (turn != null && turn.handedOver() != null) {
                context.holdings.releaseUnclaimed(turn.handedOver()); // it has this waiter's turn and join now
                joined = false;
            }
            haveTurn |= turn != null && turn.handedOver() == null;
        }
        boolean leaveTurn = haveTurn;
        haveTurn = false;
        boolean leaveLine = joined;
        Runnable passOn = () -> {
            if (leaveTurn) {
                line.leaveTurn();
            }
            if (leaveLine) {
                context.lines.leave(line);
            }
        };
        if (withdrawSent != null && leaveTurn && !withdrawSent.isDone() && error == null) {
            // the next local waiter's try goes after the withdrawal (the queue entry is this instance's); not when
            // this wait ended on Redis failing: the withdrawal then waits for a reply that does not come, and the
            // next caller must meet Redis's failure itself, not a turn held for it (RedisFaultTest)
            withdrawSent.whenComplete((ignored, failure) -> passOn.run());
        }
        else {
            passOn.run();
        }
        ended.accept(this);
        if (result.isDone()) {
            attempt.cancelled();
            return; // cancelled: the caller gave up, which is neither a timeout nor a failure
        }
        context.observer.notAcquired(keys.logicalKey(), mode, EngineClock.nanoTime() - startedAt,
                error != null ? error.getCause() : null);
        if (error != null) {
            attempt.failed(error.getCause() != null ? error.getCause() : error);
        }
        else {
            attempt.timedOut();
        }
        if (error != null) {
            result.completeExceptionally(error);
        }
        else {
            result.complete(null);
        }
    }
}
