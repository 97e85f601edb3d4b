package dev.leasehold.docs.snippets.testcontainers;

import java.time.Duration;

import dev.leasehold.LockHandle;
import dev.leasehold.LockService;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one snippet the docs module runs (its pom): with a Docker engine it starts Valkey and locks on it; without
 * one, JUnit reports it skipped.
 */
// tag::valkey[]
@SpringBootTest
@Testcontainers(disabledWithoutDocker = true)   // skipped, not failed, where no Docker engine runs
class LocksOnValkeyTest {

    @Container
    @ServiceConnection(name = "redis")   // Boot knows a Valkey image as a Redis only by this name
    static GenericContainer<?> valkey = new GenericContainer<>("valkey/valkey:8").withExposedPorts(6379);

    @Autowired LockService locks;

    @Test
    void theLockIsHeldInTheContainer() throws Exception {
        try (LockHandle lock = locks.lock("report:daily", Duration.ofSeconds(2))) {
            String exists = valkey.execInContainer("valkey-cli", "EXISTS", "lock:{report:daily}").getStdout();
            assertThat(exists.trim()).isEqualTo("1");
        }
    }
    @SpringBootConfiguration @EnableAutoConfiguration static class Application { } // docs:hide
}
// end::valkey[]
