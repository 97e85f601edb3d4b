package dev.leasehold.test.redis;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code LEASEHOLD_TEST_REDIS_URL} set, the test support uses that server: every test runs on it but those
 * that stop, pause or reconfigure it (skipped), and emptying it between tests deletes only what the run wrote.
 * Before the fix every {@link RedisServerExtension} and {@link TestRedis} class ran 0 tests there: starting the
 * shared server aborted them all, and the build was green having run nothing. The "shared" server here is one this
 * test starts itself, so no real shared server (the machine's own) is touched.
 */
@Timeout(120)
class SharedServerTest {

    @Test
    void testsRunOnTheSharedServerAndOnlyThoseThatStopItAreSkipped() throws Exception {
        try (TestRedisServer shared = TestRedisServers.startOwn(List.of(), Map.of())) {
            shared.command("SET", SharedServerSamples.USERS_KEY, "keep");
            shared.command("SET", "users:other", "keep too");

            String output = runSamplesAgainst(shared, SharedServerSamples.ExtensionSample.class,
                    SharedServerSamples.AnnotationSample.class);

            assertThat(output).as(output)
                .contains("SUMMARY ExtensionSample started=3 succeeded=2 aborted=1 failed=0")
                .contains("SUMMARY AnnotationSample started=1 succeeded=1 aborted=0 failed=0");
            assertThat(shared.command("GET", SharedServerSamples.USERS_KEY)).as("the user's keys").isEqualTo("keep");
            assertThat(shared.command("GET", "users:other")).isEqualTo("keep too");
            assertThat(shared.command("PING")).as("the shared server was not stopped").isEqualTo("PONG");
        }
    }

    /** Runs the classes in a child JVM of this test class path with the shared server in its environment. */
    private static String runSamplesAgainst(TestRedisServer shared, Class<?>... classes) throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
                SharedServerSamples.class.getName()));
        for (Class<?> sample : classes) {
            command.add(sample.getName());
        }
        File log = Files.createTempFile("shared-server-samples", ".log").toFile();
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log));
            builder.environment().put(TestRedisServers.URL_VARIABLE, "redis://" + shared.host() + ":" + shared.port());
            Process child = builder.start();
            if (!child.waitFor(90, TimeUnit.SECONDS)) {
                child.destroyForcibly();
                throw new AssertionError("the sample run did not end within 90 s: "
                        + Files.readString(log.toPath(), StandardCharsets.UTF_8));
            }
            return Files.readString(log.toPath(), StandardCharsets.UTF_8);
        }
        finally {
            log.delete();
        }
    }
}
