package dev.leasehold.test.redis;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * Test classes as a user writes them, run by {@link SharedServerTest} in a child JVM whose
 * {@code LEASEHOLD_TEST_REDIS_URL} names a server that test started (not picked up by surefire: no
 * {@code Test} suffix). {@link #main} runs the classes it is given and prints one line of counts per class.
 */
public final class SharedServerSamples {

    /** A key the "user" of the shared server had before the run: it must survive every test. */
    static final String USERS_KEY = "users:own-data";

    private SharedServerSamples() {
    }

    public static void main(String[] classes) throws Exception {
        Launcher launcher = LauncherFactory.create();
        for (String name : classes) {
            LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(Class.forName(name)))
                .build();
            SummaryGeneratingListener listener = new SummaryGeneratingListener();
            launcher.execute(request, listener);
            TestExecutionSummary summary = listener.getSummary();
            summary.getFailures().forEach(failure -> failure.getException().printStackTrace(System.out));
            System.out.println("SUMMARY " + Class.forName(name).getSimpleName() + " started="
                    + summary.getTestsStartedCount() + " succeeded=" + summary.getTestsSucceededCount() + " aborted="
                    + summary.getTestsAbortedCount() + " failed=" + summary.getTestsFailedCount());
        }
        System.out.flush();
        System.exit(0);
    }

    /** {@link RedisServerExtension}: a usable server, emptied of the earlier test's keys; stopping it is skipped. */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ExtensionSample {

        @RegisterExtension
        static RedisServerExtension redis = new RedisServerExtension();

        @Test
        @Order(1)
        void writesAKey() {
            redis.server().command("SET", "sample:written", "1");
            assertThat(redis.server().command("GET", "sample:written")).isEqualTo("1");
        }

        @Test
        @Order(2)
        void findsTheEarlierTestsKeysGoneAndTheUsersKept() {
            assertThat(redis.server().command("EXISTS", "sample:written")).isEqualTo("0");
            assertThat(redis.server().command("EXISTS", USERS_KEY)).isEqualTo("1");
        }

        @Test
        @Order(3)
        void stopsTheServer() {
            redis.server().stop(); // skipped on the shared server
        }
    }

    /** {@link TestRedis}: the run's server as a parameter. */
    @TestRedis
    static class AnnotationSample {

        @Test
        void answers(TestRedisServer server) {
            assertThat(server.command("PING")).isEqualTo("PONG");
            server.command("SET", "sample:annotated", "1");
        }
    }
}
