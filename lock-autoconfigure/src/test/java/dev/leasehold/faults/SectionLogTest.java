package dev.leasehold.faults;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's token-order rule on crafted logs. A worker paused between Redis's grant and its own clock reading
 * records the grant after a newer holder's (CI, seed 1 on SINGLE, 2026-11-29: w2 granted token ...773397, paused
 * 3.45 s past its 2 s lease, read it as granted 6.7 ms after w1's ...224109, was refused by fencing and told): that
 * is no token going back. A call that began after another section was granted and got a lower token is.
 */
class SectionLogTest {

    private static SectionLog.Section section(String worker, long token, long callMicros, long grantMicros,
            String verdict) {
        return new SectionLog.Section(worker, token, callMicros, grantMicros, grantMicros + 10, grantMicros + 50, verdict,
                verdict.equals("A"), !verdict.equals("A"));
    }

    @Test
    void aGrantRecordedLateAfterAPauseIsNotATokenGoingBack() {
        SectionLog.Section w1 = section("w1", 5_000, 4_990, 5_000, "A");
        SectionLog.Section pausedW2 = section("w2", 1_500, 1_400, 5_006, "r");
        List<String> violations = new SectionLog(List.of(w1, pausedW2), 1).check().violations();
        assertThat(violations).isEmpty();
    }

    @Test
    void aLowerTokenForACallThatBeganAfterAGrantIsFound() {
        SectionLog.Section w1 = section("w1", 5_000, 4_990, 5_000, "A");
        SectionLog.Section w2 = section("w2", 4_000, 5_002, 5_006, "r");
        List<String> violations = new SectionLog(List.of(w1, w2), 1).check().violations();
        assertThat(violations).singleElement().asString().startsWith("token went backwards");
    }
}
