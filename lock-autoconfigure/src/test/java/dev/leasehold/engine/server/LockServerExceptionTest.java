package dev.leasehold.engine.server;

import java.util.concurrent.CompletionException;

import dev.leasehold.engine.server.LockServerException.Kind;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which refusals a release or withdrawal sends again: Redis's TRYAGAIN, however the client wrapped it, and no other. */
class LockServerExceptionTest {

    private static final String TRY_AGAIN = "TRYAGAIN Multiple keys request during rehashing of slot";

    @Test
    void aTryAgainIsKnownInTheClientsExceptionAndUnderSpringsTranslation() {
        // Lettuce or Jedis directly: the client's exception carries Redis's text
        assertThat(LockServerException.isTryAgain(refused(TRY_AGAIN, new IllegalStateException(TRY_AGAIN)))).isTrue();
        // a RedisTemplate over Lettuce: Spring's exception ("Error in execution") wraps the client's
        assertThat(LockServerException.isTryAgain(new CompletionException(refused("Error in execution",
                new IllegalStateException("Error in execution", new IllegalStateException(TRY_AGAIN)))))).isTrue();
    }

    @Test
    void otherRefusalsAndFailuresAreNotSentAgain() {
        assertThat(LockServerException.isTryAgain(refused("ERR script said TRYAGAIN",
                new IllegalStateException("ERR script said TRYAGAIN")))).isFalse();
        assertThat(LockServerException.isTryAgain(refused("NOPERM", new IllegalStateException("NOPERM")))).isFalse();
        assertThat(LockServerException.isTryAgain(new LockServerException(Kind.NO_REPLY, TRY_AGAIN,
                new IllegalStateException(TRY_AGAIN)))).isFalse();
        assertThat(LockServerException.isTryAgain(new IllegalStateException(TRY_AGAIN))).isFalse();
        assertThat(LockServerException.isTryAgain(null)).isFalse();
    }

    private static LockServerException refused(String message, Throwable cause) {
        return new LockServerException(Kind.REFUSED, message, cause);
    }
}
