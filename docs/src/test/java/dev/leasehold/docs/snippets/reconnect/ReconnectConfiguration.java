package dev.leasehold.docs.snippets.reconnect;

// tag::reconnect[]
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.resource.Delay;

import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class ReconnectConfiguration {

    /** Lettuce retries a lost connection after 100 ms, 200, 400, 800, then every second (default: up to 30 s). */
    @Bean
    ClientResourcesBuilderCustomizer shortReconnectDelay() {
        return resources -> resources.reconnectDelay(
                Delay.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS));
    }
}
// end::reconnect[]
