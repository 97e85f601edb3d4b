package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.leasehold.campaign.History;
import dev.leasehold.campaign.HistoryChecker;
import dev.leasehold.engine.server.Grant;
import dev.leasehold.engine.server.LockServer.FenceBlock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ToldChecks}' rules on crafted histories: each fails on one that breaks it and passes on ones that keep it
 * (or that its excuses cover). What Redis said is timed on a virtual clock that reads {@link #ORIGIN} at the
 * history's time 0, as in a run (the rules once compared the two time bases and could never fire).
 */
class ToldChecksTest {

    private static final long ORIGIN = 1_000_000_000_000L;

    private static final long MS = 1_000_000L;

    private static final long REDIS_TIMEOUT = 500 * MS;

    private final AtomicLong clock = new AtomicLong(ORIGIN);

    private final History history = new History(clock::get);

    /** One owner token whose grant reserved fencing tokens 100 to 115 (100 is the grant's own). */
    private final RedisSaid said = new RedisSaid();

    ToldChecksTest() {
        said.ran("t1", Grant.granted(100, 115), ORIGIN);
    }

    private List<HistoryChecker.Violation> check() {
        List<HistoryChecker.Violation> violations = new ArrayList<>();
        ToldChecks.check(history, List.of(new ToldChecks.Told("i0", said, -1)), REDIS_TIMEOUT, ORIGIN, violations);
        return violations;
    }

    private void section(int id, long token, long grantedMs, long endMs) {
        history.section(new History.Section(id, "i0", "k0", false, token, false, "tryLock", grantedMs * MS, grantedMs * MS,
                endMs * MS, 0, History.Verdict.ACCEPTED, true, false, false));
    }

    private void toldLostAt(long ms, long token) {
        clock.set(ORIGIN + ms * MS);
        history.lost("i0", "k0", token);
    }

    /** Item 2: a renewal of t1's lease refused at 50 ms, the watchdog done reading it at 60 ms. */
    private void refusalReadAt60() {
        said.renewalDelivered("k0", "t1", false, ORIGIN + 40 * MS, ORIGIN + 50 * MS);
        said.read(refused -> true, ORIGIN + 60 * MS);
    }

    @Test
    void aLeaseHandedOnAfterItsRefusalWasReadIsAViolation() {
        refusalReadAt60();
        section(1, 100, 10, 65);
        section(2, 101, 70, 90); // handed on from the block after the refusal was read
        assertThat(check()).singleElement().satisfies(violation -> assertThat(violation.toString())
            .contains("handed on after its engine read Redis refuse").contains("token=101"));
    }

    @Test
    void aLeaseHandedOnBeforeTheRefusalWasReadIsNot() {
        refusalReadAt60();
        section(1, 100, 10, 45);
        section(2, 101, 45, 90);
        assertThat(check()).isEmpty();
    }

    @Test
    void aGrantFromRedisAfterTheRefusalIsNot() {
        refusalReadAt60();
        said.ran("t1", new FenceBlock(116, 131, false), ORIGIN + 65 * MS); // a reservation's block: Redis confirmed its first token
        section(2, 116, 70, 90);
        assertThat(check()).isEmpty();
    }

    @Test
    void aLockDeliveredAfterTheRefusalAndToldLostWithItsGrantIsNot() {
        refusalReadAt60();
        section(2, 101, 70, 90);
        toldLostAt(70, 101);
        assertThat(check()).isEmpty();
    }

    @Test
    void aLockToldLostOnlyLaterIsStillAViolation() {
        refusalReadAt60();
        section(2, 101, 70, 90);
        toldLostAt(90, 101); // its release found the key gone: too late, it was held with another client's
        assertThat(check()).hasSize(1);
    }

    @Test
    void aRefusalTheEngineNeverReadJudgesNothing() {
        said.renewalDelivered("k0", "t1", false, ORIGIN + 40 * MS, ORIGIN + 50 * MS);
        section(2, 101, 70, 90);
        assertThat(check()).isEmpty();
    }

    /** Item 3: t1's key lost at 20 ms while the section of token 100 held it; a reservation sent at 40 ms. */
    private void lostWhileHeldThenReservationGone(long answeredMs) {
        section(1, 100, 10, 30);
        history.fault("delete-key", "redis k0", 20 * MS, 20 * MS);
        said.reservationGone("k0", "t1", ORIGIN + 40 * MS, ORIGIN + answeredMs * MS);
    }

    @Test
    void aReservationAnsweredNotYoursWithTheHolderBeforeNeverToldIsAViolation() {
        lostWhileHeldThenReservationGone(45);
        assertThat(check()).singleElement().satisfies(violation -> assertThat(violation.toString())
            .contains("token reservation").contains("never told").contains("token=100"));
    }

    @Test
    void theHolderBeforeToldKeepsIt() {
        lostWhileHeldThenReservationGone(45);
        toldLostAt(46, 100);
        assertThat(check()).isEmpty();
    }

    @Test
    void anAnswerLaterThanHalfTheRedisTimeoutJudgesNothing() {
        lostWhileHeldThenReservationGone(40 + 251);
        assertThat(check()).isEmpty();
    }

    @Test
    void aRenewalConfirmedBeforeTheGrantExcusesNothing() {
        said.renewalDelivered("k0", "t1", true, ORIGIN + 2 * MS, ORIGIN + 5 * MS);
        lostWhileHeldThenReservationGone(45);
        assertThat(check()).hasSize(1);
    }

    @Test
    void aRenewalConfirmedAfterTheGrantExcusesTheHolderBefore() {
        said.renewalDelivered("k0", "t1", true, ORIGIN + 12 * MS, ORIGIN + 15 * MS);
        lostWhileHeldThenReservationGone(45);
        assertThat(check()).isEmpty();
    }

    @Test
    void aKeyLostOnlyAfterTheHolderReleasedItJudgesNothing() {
        section(1, 100, 10, 30);
        history.fault("delete-key", "redis k0", 35 * MS, 35 * MS);
        said.reservationGone("k0", "t1", ORIGIN + 40 * MS, ORIGIN + 45 * MS);
        assertThat(check()).isEmpty();
    }

    /** RD1: t1's release sent at 40 ms, answered "not held" at {@code answeredMs}, by the holder of token 101. */
    private void releaseRefused(long answeredMs) {
        section(1, 100, 10, 20);
        section(2, 101, 20, 40);
        said.releaseRefused("k0", "t1", ORIGIN + 40 * MS, ORIGIN + answeredMs * MS);
    }

    @Test
    void aReleaseAnsweredNotHeldWithItsHolderNeverToldIsAViolation() {
        releaseRefused(45);
        assertThat(check()).singleElement().satisfies(violation -> assertThat(violation.toString())
            .contains("answered a release with \"not held\"").contains("token=101"));
    }

    @Test
    void theReleasingHolderToldKeepsIt() {
        releaseRefused(45);
        toldLostAt(46, 101);
        assertThat(check()).isEmpty();
    }

    @Test
    void aReleaseAnsweredLaterThanHalfTheRedisTimeoutJudgesNothing() {
        releaseRefused(40 + 251);
        assertThat(check()).isEmpty();
    }

    @Test
    void aReleaseAnsweredOnceTheEngineBeganClosingJudgesNothing() {
        releaseRefused(45);
        List<HistoryChecker.Violation> violations = new ArrayList<>();
        ToldChecks.check(history, List.of(new ToldChecks.Told("i0", said, 44 * MS)), REDIS_TIMEOUT, ORIGIN, violations);
        assertThat(violations).isEmpty();
    }

    /** RD2: t1's read lease (token 100, 10-50 ms), a writer of another instance granted token 120 at {@code writerMs}. */
    private List<HistoryChecker.Violation> readerReleasedAt50(long writerMs) {
        history.section(new History.Section(1, "i0", "k0", true, 100, false, "tryLock", 10 * MS, 10 * MS, 50 * MS, 0,
                History.Verdict.ACCEPTED, true, false, false));
        history.section(new History.Section(2, "i1", "k0", false, 120, false, "tryLock", writerMs * MS, writerMs * MS,
                writerMs * MS + 5 * MS, 0, History.Verdict.ACCEPTED, true, false, false));
        said.releaseAccepted("k0", "t1", ORIGIN + 48 * MS, ORIGIN + 50 * MS);
        List<HistoryChecker.Violation> violations = new ArrayList<>();
        ToldChecks.releasedAfterAnotherGrant(history, List.of(new ToldChecks.Told("i0", said, -1),
                new ToldChecks.Told("i1", new RedisSaid(), -1)), ORIGIN, violations);
        return violations;
    }

    @Test
    void aReadLeaseReleasedAfterAWriterWasGrantedTheKeyIsAViolation() {
        assertThat(readerReleasedAt50(30)).singleElement().satisfies(violation -> assertThat(violation.toString())
            .contains("answered a release with \"released\" after it had granted the key to another holder"));
    }

    @Test
    void aWriterGrantedOnlyAfterTheReleaseRanIsNot() {
        assertThat(readerReleasedAt50(49)).isEmpty();
    }

    @Test
    void aReleaseRefusedAfterRedisConfirmedTheLeaseForASuccessorJudgesNothing() {
        releaseRefused(45);
        said.ran("t1", new FenceBlock(116, 131, false), ORIGIN + 42 * MS); // reserved for a successor, given back
        assertThat(check()).isEmpty();
    }
}
