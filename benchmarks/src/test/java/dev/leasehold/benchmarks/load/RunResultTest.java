package dev.leasehold.benchmarks.load;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The fairness figures, and that they survive the pipe from the second JVM. */
class RunResultTest {

    private static RunResult run(long[]... perClientThreads) {
        long acquisitions = 0;
        for (long[] threads : perClientThreads) {
            for (long count : threads) {
                acquisitions += count;
            }
        }
        return new RunResult(acquisitions, 0, 0, 0, null, new long[] { 5, 7 }, 1.0, perClientThreads);
    }

    @Test
    void fewestToMostIsTakenOverEveryThreadOfEveryClient() {
        RunResult result = run(new long[] { 10, 8 }, new long[] { 4, 9 });

        assertThat(result.fewestToMostPerThread()).isCloseTo(4.0 / 10, within(1e-9));
        assertThat(result.smallestClientShare()).isCloseTo(13.0 / 31, within(1e-9));
    }

    @Test
    void oneClientHasNoShareAndAnIdleRunHasNoRatio() {
        assertThat(run(new long[] { 3, 3 }).smallestClientShare()).isNaN();
        assertThat(run(new long[] { 0, 0 }, new long[] { 0, 0 }).fewestToMostPerThread()).isNaN();
    }

    @Test
    void mergingTwoJvmsKeepsTheirClientsApartAcrossThePipe() {
        RunResult mine = run(new long[] { 6, 2, 4, 4 });
        RunResult theirs = RunResult.decode(("result " + run(new long[] { 1, 1, 1, 1 }).encode()).split(" "), 1);

        RunResult merged = mine.plus(theirs);

        assertThat(merged.perClientThreads()).hasDimensions(2, 4);
        assertThat(merged.acquisitions()).isEqualTo(20);
        assertThat(merged.smallestClientShare()).isCloseTo(4.0 / 20, within(1e-9));
        assertThat(merged.fewestToMostPerThread()).isCloseTo(1.0 / 6, within(1e-9));
        assertThat(merged.waitsNanos()).containsExactly(5, 5, 7, 7);
    }
}
