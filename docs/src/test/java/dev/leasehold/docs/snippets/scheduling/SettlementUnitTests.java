package dev.leasehold.docs.snippets.scheduling;

import dev.leasehold.LockAssert;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A unit test of code that asserts its lock, run without Redis. */
class SettlementUnitTests {

    // tag::test-helper[]
    @BeforeEach void noLocksHere() { LockAssert.TestHelper.makeAllAssertsPass(true); }
    @AfterEach  void checkAgain()  { LockAssert.TestHelper.makeAllAssertsPass(false); }
    // end::test-helper[]
}
