package dev.leasehold.sample.aot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;

import dev.leasehold.LockService;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.aop.support.AopUtils;
import org.springframework.aot.AotDetector;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the sample from its AOT-processed context ({@code spring-boot:process-aot} ran in prepare-package;
 * failsafe runs this with {@code -Dspring.aot.enabled=true}) and takes a lock through {@code @DistributedLock}.
 */
@Timeout(120)
class AotSampleIT {

    @Test
    void theAotProcessedContextStartsAndLocksThroughTheAnnotation() {
        assertThat(AotDetector.useGeneratedArtifacts()).as("spring.aot.enabled").isTrue();
        assertThat(ClassUtils.isPresent(AotSampleApplication.class.getName() + "__ApplicationContextInitializer",
                getClass().getClassLoader())).as("the AOT-generated initializer").isTrue();

        SpringApplication application = new SpringApplication(AotSampleApplication.class);
        // in AOT mode the initializer is looked up by the main class (here the test runner's, by default)
        application.setMainApplicationClass(AotSampleApplication.class);
        try (TestRedisServer redis = TestRedisServers.start();
                ConfigurableApplicationContext context = application.run("--spring.data.redis.host=" + redis.host(),
                        "--spring.data.redis.port=" + redis.port())) {
            ReportJob job = context.getBean(ReportJob.class);
            assertThat(AopUtils.isAopProxy(job)).isTrue();
            long token = job.run(new ReportJob.Day("2026-11-23"));
            assertThat(token).isPositive();
            assertThat(context.getBean(LockService.class).isLocked("report:2026-11-23")).isFalse();

            // while another owner holds the key, the fallback answers
            LockService locks = context.getBean(LockService.class);
            try (var held = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> locks.lock("report:2026-11-24", java.time.Duration.ZERO)).join()) {
                assertThat(job.run(new ReportJob.Day("2026-11-24"))).isZero();
            }
        }
    }

    @Test
    void theGeneratedNativeHintsIncludeTheLuaScripts() throws IOException {
        Path hints = Paths.get("target", "spring-aot", "main", "resources", "META-INF", "native-image");
        assertThat(hints).isDirectory();
        try (Stream<Path> files = Files.walk(hints)) {
            // JSON escapes '/' as '\/'
            String all = String.join("\n", files.filter(Files::isRegularFile).map(AotSampleIT::read).toList())
                .replace("\\/", "/").replaceAll("\\s", "");
            assertThat(all).contains("dev/leasehold/engine/redis/*.lua");
            // the annotation's proxy, and the fallback invoked reflectively
            assertThat(all).contains("\"proxy\":[\"dev.leasehold.DistributedLock\"]").contains("\"name\":\"busy\"");
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
