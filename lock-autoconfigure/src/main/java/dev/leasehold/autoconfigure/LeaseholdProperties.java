package dev.leasehold.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.support.DurationLimits;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of Leasehold's distributed locks. Redis itself is configured with {@code spring.data.redis.*}.
 */
@ConfigurationProperties(prefix = "leasehold")
public class LeaseholdProperties {

    /**
     * Whether distributed locking is on. When false, the lock beans and the @DistributedLock interception
     * are removed and annotated methods run without a lock.
     */
    private boolean enabled = true;

    /**
     * Prepended to every logical key in Redis.
     */
    private String keyPrefix = "lock:";

    /**
     * How long @DistributedLock waits for a lock when the annotation gives no waitTime.
     */
    private Duration waitTime = Duration.ofSeconds(5);

    /**
     * Lease of watchdog-renewed locks (those taken without a fixed lease). The watchdog renews it every
     * third of it; a crashed holder blocks others at most this long.
     */
    private Duration leaseTime = Duration.ofSeconds(30);

    /**
     * Upper bound on any single Redis call the lock engine makes, independent of the connection
     * factory's own timeout.
     */
    private Duration redisTimeout = Duration.ofSeconds(2);

    /**
     * How long a release channel stays subscribed after its last local waiter left, so a busy key is not
     * subscribed and unsubscribed on every hand-off.
     */
    private Duration subscriptionLinger = Duration.ofSeconds(2);

    /**
     * Order of the @DistributedLock advice among the other advice on a bean (lower runs first, outside).
     * The default, Integer.MAX_VALUE - 100, wraps the transaction and cache advice (ordered
     * Integer.MAX_VALUE by Spring Boot), so a lock is taken before a transaction begins and released after
     * it has committed or rolled back.
     */
    private int adviceOrder = 2147483547;

    /**
     * Quorum mode: locks on a majority of independent Redis servers (the Redlock algorithm).
     */
    private final Quorum quorum = new Quorum();

    private final ReplicaAck replicaAck = new ReplicaAck();

    private final FairQueue fairQueue = new FairQueue();

    private final HandOff handOff = new HandOff();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public Duration getWaitTime() {
        return waitTime;
    }

    public void setWaitTime(Duration waitTime) {
        this.waitTime = waitTime;
    }

    public Duration getLeaseTime() {
        return leaseTime;
    }

    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    public Duration getRedisTimeout() {
        return redisTimeout;
    }

    public void setRedisTimeout(Duration redisTimeout) {
        this.redisTimeout = redisTimeout;
    }

    public int getAdviceOrder() {
        return adviceOrder;
    }

    public void setAdviceOrder(int adviceOrder) {
        this.adviceOrder = adviceOrder;
    }

    public ReplicaAck getReplicaAck() {
        return replicaAck;
    }

    /**
     * Replica acknowledgement: a grant or renewal counts only once this many replicas confirmed it (Redis
     * WAIT), so that a failover is less likely to lose a lock. WAIT is not consensus: an acknowledged write
     * can still be lost when the replica that has it is not the one promoted. Use fencing tokens as well.
     */
    public static class ReplicaAck {

        /**
         * Replicas that must acknowledge a grant or renewal before it counts; 0 turns acknowledgement off. A
         * grant that is not acknowledged in time is taken back and retried within the wait.
         */
        private int replicas = 0;

        /**
         * How long to wait for the replicas' acknowledgement of one grant or renewal.
         */
        private Duration timeout = Duration.ofMillis(100);

        public int getReplicas() {
            return replicas;
        }

        public void setReplicas(int replicas) {
            this.replicas = replicas;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    public Duration getSubscriptionLinger() {
        return subscriptionLinger;
    }

    public void setSubscriptionLinger(Duration subscriptionLinger) {
        this.subscriptionLinger = subscriptionLinger;
    }

    public Quorum getQuorum() {
        return quorum;
    }

    /** Quorum mode (Redlock over independent Redis servers). */
    public static class Quorum {

        /**
         * URLs of independent Redis servers, redis://[[user]:password@]host:port[/db] or rediss:// for TLS.
         * Three or more turn quorum mode on: every lock is then taken on a majority of them, and
         * spring.data.redis holds no lock keys. One or two is a startup error.
         */
        private List<String> nodes = new ArrayList<>();

        /**
         * Part of the lease assumed lost to clock drift between the nodes; a lock's validity is its lease
         * less the time the acquire took, less lease x this factor + 2 ms.
         */
        private double clockDriftFactor = 0.01;

        /**
         * How long each node keeps a key's fencing counter after its last grant. Unset (the default): for ever,
         * one small key per lock name ever used, per node. Set: the counters expire, and tokens never fall below
         * the clients' clocks (in µs), so they stay increasing as long as the clients' clocks differ by less
         * than this and never step back. At least a minute.
         */
        private @Nullable Duration fenceRetention;

        public @Nullable Duration getFenceRetention() {
            return fenceRetention;
        }

        public void setFenceRetention(@Nullable Duration fenceRetention) {
            this.fenceRetention = fenceRetention;
        }

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        public double getClockDriftFactor() {
            return clockDriftFactor;
        }

        public void setClockDriftFactor(double clockDriftFactor) {
            this.clockDriftFactor = clockDriftFactor;
        }
    }

    public FairQueue getFairQueue() {
        return fairQueue;
    }

    /** The engine's settings from these properties, validated (an invalid value fails startup, naming it). */
    LockEngineSettings engineSettings() {
        checkDurations();
        return new LockEngineSettings(keyPrefix, leaseTime, redisTimeout, subscriptionLinger, engineFairQueue(),
                new LockEngineSettings.HandOff(handOff.getMaxTurn(), handOff.getTurnCheck(), handOff.getLinger()));
    }

    /**
     * Every {@code leasehold.*} duration but the wait is at most 365 days, so that it keeps its promises (Redis
     * expiry and the engine's clock arithmetic); a longer {@code leasehold.wait-time} has no time limit at all.
     */
    void checkDurations() {
        DurationLimits.atMostMax("leasehold.lease-time", leaseTime, "");
        DurationLimits.atMostMax("leasehold.redis-timeout", redisTimeout, "");
        DurationLimits.atMostMax("leasehold.subscription-linger", subscriptionLinger, "");
        DurationLimits.atMostMax("leasehold.replica-ack.timeout", replicaAck.getTimeout(), "");
        DurationLimits.atMostMax("leasehold.quorum.fence-retention", quorum.getFenceRetention(), "");
        DurationLimits.atMostMax("leasehold.fair-queue.entry-timeout", fairQueue.getEntryTimeout(), "");
        DurationLimits.atMostMax("leasehold.fair-queue.claim-timeout", fairQueue.getClaimTimeout(), "");
        DurationLimits.atMostMax("leasehold.fair-queue.refresh-interval", fairQueue.getRefreshInterval(), "");
        DurationLimits.atMostMax("leasehold.hand-off.turn-check", handOff.getTurnCheck(), "");
        DurationLimits.atMostMax("leasehold.hand-off.linger", handOff.getLinger(), "");
        if (waitTime != null && waitTime.isNegative()) {
            throw new IllegalArgumentException("leasehold.wait-time must be zero or positive, was " + waitTime);
        }
    }

    /** The fair queue's timing and the token block size, as the lock servers take them. */
    dev.leasehold.engine.server.FairQueue engineFairQueue() {
        return new dev.leasehold.engine.server.FairQueue(fairQueue.getEntryTimeout(), fairQueue.getClaimTimeout(),
                fairQueue.getRefreshInterval(), handOff.getTokenBlock());
    }

    public HandOff getHandOff() {
        return handOff;
    }

    /**
     * The fair queue that waiting instances form in Redis, one entry per instance and key. The defaults suit
     * most applications; shorter timeouts let a crashed instance's place go sooner, at the cost of more refreshes.
     */
    public static class FairQueue {

        /**
         * How long a waiting instance counts as alive without a sign of it: a crashed or departed instance delays
         * the queue at most this long. On one server the lifetime of the instance's liveness key (written every
         * refresh interval while any of its waiters sleeps); on a Cluster, of each entry without a refresh. At
         * least twice the refresh interval.
         */
        private Duration entryTimeout = Duration.ofSeconds(3);

        /**
         * How long a release's grant to the queue's head waits to be claimed before it lapses and goes to the
         * next; on one server also how much later than the entry ahead of it a queued waiter looks again. At
         * least twice the refresh interval.
         */
        private Duration claimTimeout = Duration.ofSeconds(3);

        /**
         * On one server: how often a waiting instance writes its liveness key (one write for all its waiters),
         * and the longest the queue's head goes without looking again. On a Cluster: the longest a queued
         * instance goes without trying (and so refreshing its entry and claiming a grant whose wake-up message
         * was lost).
         */
        private Duration refreshInterval = Duration.ofSeconds(1);

        public Duration getEntryTimeout() {
            return entryTimeout;
        }

        public void setEntryTimeout(Duration entryTimeout) {
            this.entryTimeout = entryTimeout;
        }

        public Duration getClaimTimeout() {
            return claimTimeout;
        }

        public void setClaimTimeout(Duration claimTimeout) {
            this.claimTimeout = claimTimeout;
        }

        public Duration getRefreshInterval() {
            return refreshInterval;
        }

        public void setRefreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
        }
    }

    /**
     * Local hand-off: a thread releasing an exclusive watchdog lock while another thread of the same JVM waits
     * for the key passes the lock to it without a Redis round trip; every hand-off still gets its own, higher
     * fencing token.
     */
    public static class HandOff {

        /**
         * Fencing tokens an exclusive grant reserves for hand-offs; one round trip reserves the next block when
         * these are used up. Larger blocks mean fewer round trips on a hot key, and larger gaps between tokens. At
         * most 1000: tokens never run more than a block of microseconds ahead of the Redis clock.
         */
        private int tokenBlock = 16;

        /**
         * Hand-offs in one turn before the key goes back through Redis, so that other instances get their chance;
         * 0 turns local hand-off off (every release then goes through Redis).
         */
        private int maxTurn = 64;

        /**
         * How long a turn hands off without asking Redis whether other instances queue for the key (with long
         * critical sections, a waiting instance then waits about one section, not a whole turn), and once they do,
         * how long after its grant a thread of this JVM may still join the turn: about the longest another instance
         * waits per turn ahead of it.
         */
        private Duration turnCheck = Duration.ofMillis(25);

        /**
         * How long a thread releasing a lock that other threads of this JVM used in its turn waits, when none waits
         * yet, for one to come back before the key goes through Redis (on a busy machine the thread that handed
         * the lock on is often descheduled by its successor's wake-up, and misses the turn by microseconds); 0 turns
         * it off. Only a blocking release by the lock's own thread waits.
         */
        private Duration linger = Duration.of(100, ChronoUnit.MICROS);

        public int getTokenBlock() {
            return tokenBlock;
        }

        public void setTokenBlock(int tokenBlock) {
            this.tokenBlock = tokenBlock;
        }

        public int getMaxTurn() {
            return maxTurn;
        }

        public void setMaxTurn(int maxTurn) {
            this.maxTurn = maxTurn;
        }

        public Duration getTurnCheck() {
            return turnCheck;
        }

        public void setTurnCheck(Duration turnCheck) {
            this.turnCheck = turnCheck;
        }

        public Duration getLinger() {
            return linger;
        }

        public void setLinger(Duration linger) {
            this.linger = linger;
        }
    }
}
