package dev.leasehold.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.integration.LeaseholdLockRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Integration's own leader-election tests, written again for {@link LeaseholdLockRegistry} on a real
 * Redis: {@code LockRegistryLeaderInitiatorTests} (spring-integration-core, run there on its in-memory
 * registry), {@code RedisLockRegistryLeaderInitiatorTests}, and {@code testLostConnection} of
 * {@code JdbcLockRegistryLeaderInitiatorTests} (disabled there; here the instance's Redis calls are cut).
 * Their names follow Spring Integration's. Left out: {@code competingWithLock},
 * {@code testGracefulLeaderSelectorExit} and {@code testExceptionFromLock}, which drive the initiator with
 * mocked locks and involve no registry.
 */
class RegistryLeaderCasesTest extends RealRedisEngineTest {

    private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();

    @AfterEach
    void stopInitiators() {
        initiators.forEach(LockRegistryLeaderInitiator::stop);
    }

    @Test
    void startAndStop() {
        Events events = new Events();
        LockRegistryLeaderInitiator initiator = initiator(new LeaseholdLockRegistry(fixture.engine()), events);
        assertThat(initiator.getContext().isLeader()).isFalse();
        initiator.start();
        assertThat(initiator.isRunning()).isTrue();
        events.awaitGranted(1);
        stillLeaderOverHeartbeats(initiator);
        initiator.stop();
        events.awaitRevoked(1);
        assertThat(initiator.getContext().isLeader()).isFalse();
        Await.until(Duration.ofSeconds(5), "the key is released", () -> !lockKeyExists("leader"));
    }

    @Test
    void yield() {
        Events events = new Events();
        LockRegistryLeaderInitiator initiator = initiator(new LeaseholdLockRegistry(fixture.engine()), events);
        initiator.start();
        events.awaitGranted(1);
        initiator.getContext().yield();
        events.awaitRevoked(1);
        events.awaitGranted(2); // the only candidate leads again after its busy wait
        initiator.stop();
    }

    @Test
    void competing() {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Events firstEvents = new Events();
        Events otherEvents = new Events();
        LockRegistryLeaderInitiator first = initiator(registry, firstEvents);
        LockRegistryLeaderInitiator other = initiator(registry, otherEvents);
        first.start();
        firstEvents.awaitGranted(1);
        other.start();
        first.stop();
        otherEvents.awaitGranted(1);
        assertThat(other.getContext().isLeader()).isTrue();
        assertThat(first.getContext().isLeader()).isFalse();
    }

    @Test
    void competingWithErrorPublish() {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Events firstEvents = new Events();
        Events otherEvents = new Events();
        LockRegistryLeaderInitiator first = initiator(registry, firstEvents);
        LockRegistryLeaderInitiator other = initiator(registry, otherEvents);
        other.setPublishFailedEvents(true);
        first.start();
        firstEvents.awaitGranted(1);
        other.start();
        Await.until(Duration.ofSeconds(20), "the other fails to acquire", () -> otherEvents.failed.get() > 0);
        first.stop();
        otherEvents.awaitGranted(1);
        assertThat(other.getContext().isLeader()).isTrue();
    }

    @Test
    void testExceptionFromEvent() {
        Events failing = new Events() {
            @Override
            public void publishOnGranted(Object source, Context context, String role) {
                super.publishOnGranted(source, context, role);
                throw new IllegalStateException("intentional");
            }
        };
        LockRegistryLeaderInitiator initiator = initiator(new LeaseholdLockRegistry(fixture.engine()), failing);
        initiator.start();
        failing.awaitGranted(1);
        stillLeaderOverHeartbeats(initiator);
    }

    @Test
    void testDistributedLeaderElection() {
        LeaseholdLockRegistry registry = new LeaseholdLockRegistry(fixture.engine());
        Events firstEvents = new Events();
        Events secondEvents = new Events();
        LockRegistryLeaderInitiator first = initiator(registry, firstEvents);
        LockRegistryLeaderInitiator second = initiator(registry, secondEvents);
        first.start();
        second.start();
        Events one = firstEvents;
        Events two = secondEvents;
        Await.until(Duration.ofSeconds(20), "one leads", () -> one.granted.get() + two.granted.get() == 1);
        if (secondEvents.granted.get() == 1) { // call the one that leads "first"
            LockRegistryLeaderInitiator leader = second;
            second = first;
            first = leader;
            Events leaderEvents = secondEvents;
            secondEvents = firstEvents;
            firstEvents = leaderEvents;
        }
        assertThat(first.getContext().isLeader()).isTrue();
        assertThat(second.getContext().isLeader()).isFalse();

        // a yielding leader sleeps long before it tries again (10 s there, 2 s here), so the other takes over
        first.setBusyWaitMillis(2000);
        first.getContext().yield();
        firstEvents.awaitRevoked(1);
        secondEvents.awaitGranted(1);
        assertThat(second.getContext().isLeader()).isTrue();
        assertThat(first.getContext().isLeader()).isFalse();

        first.setBusyWaitMillis(LockRegistryLeaderInitiator.DEFAULT_BUSY_WAIT_TIME);
        second.setBusyWaitMillis(2000);
        second.getContext().yield();
        secondEvents.awaitRevoked(1);
        firstEvents.awaitGranted(2);
        assertThat(first.getContext().isLeader()).isTrue();
        assertThat(second.getContext().isLeader()).isFalse();

        second.stop();
        first.stop();
        firstEvents.awaitRevoked(2);
        assertThat(first.getContext().isLeader()).isFalse();
    }

    @Test
    void testLostConnection() {
        FaultyLockServer server = new FaultyLockServer(fixture.server("lock:"));
        DefaultLockEngine engine = fixture.engine(server,
                EngineFixture.fastSettings().withLeaseTime(Duration.ofMillis(600)));
        Events events = new Events();
        LockRegistryLeaderInitiator initiator = initiator(new LeaseholdLockRegistry(engine), events);
        initiator.start();
        events.awaitGranted(1);

        server.failRenewals(true); // Redis can no longer be reached: the lease runs out
        server.failAcquires(true);
        events.awaitRevoked(1);
        assertThat(initiator.getContext().isLeader()).isFalse();

        server.failRenewals(false);
        server.failAcquires(false);
        events.awaitGranted(2);
        assertThat(initiator.getContext().isLeader()).isTrue();
        stillLeaderOverHeartbeats(initiator);
    }

    private LockRegistryLeaderInitiator initiator(LeaseholdLockRegistry registry, Events events) {
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, new DefaultCandidate());
        initiator.setLeaderEventPublisher(events);
        initiators.add(initiator);
        return initiator;
    }

    /** Leads through several heartbeats (each re-locks and unlocks the held lock). */
    private static void stillLeaderOverHeartbeats(LockRegistryLeaderInitiator initiator) {
        long until = System.nanoTime()
                + Duration.ofMillis(3 * LockRegistryLeaderInitiator.DEFAULT_HEART_BEAT_TIME).toNanos();
        while (System.nanoTime() < until) {
            assertThat(initiator.getContext().isLeader()).isTrue();
            try {
                Thread.sleep(20); // sampling, as LeaderElectionTest does
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Counts an initiator's events (Spring Integration's tests count latches down). */
    static class Events implements LeaderEventPublisher {

        final AtomicInteger granted = new AtomicInteger();

        final AtomicInteger revoked = new AtomicInteger();

        final AtomicInteger failed = new AtomicInteger();

        @Override
        public void publishOnGranted(Object source, Context context, String role) {
            granted.incrementAndGet();
        }

        @Override
        public void publishOnRevoked(Object source, Context context, String role) {
            revoked.incrementAndGet();
        }

        @Override
        public void publishOnFailedToAcquire(Object source, Context context, String role) {
            failed.incrementAndGet();
        }

        void awaitGranted(int times) {
            Await.until(Duration.ofSeconds(20), "granted " + times + " time(s)", () -> granted.get() >= times);
        }

        void awaitRevoked(int times) {
            Await.until(Duration.ofSeconds(20), "revoked " + times + " time(s)", () -> revoked.get() >= times);
        }
    }
}
