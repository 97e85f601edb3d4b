package dev.leasehold.benchmarks.contenders;

import java.time.Duration;

import dev.leasehold.LockAcquisitionException;
import dev.leasehold.LockMode;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Leasehold through {@code @DistributedLock} on a bean of a Spring Boot application that uses the starter's
 * auto-configuration, pointed at the benchmark's server. The annotations wait up to 30 s whatever
 * {@code wait} is given (an annotation's wait is fixed); the scenarios never need that long.
 */
public final class AnnotatedLeaseholdContender implements Contender {

    public static final String ID = "leasehold-annotation";

    private final ConfigurableApplicationContext context;

    private final LockedWork work;

    private final String unavailableReason;

    public AnnotatedLeaseholdContender(Redis redis) {
        this.context = new SpringApplicationBuilder(BenchmarkApplication.class)
            .web(WebApplicationType.NONE)
            .bannerMode(org.springframework.boot.Banner.Mode.OFF)
            .logStartupInfo(false)
            .registerShutdownHook(false)
            .properties("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    "spring.jmx.enabled=false", "logging.level.root=WARN")
            .run();
        this.work = context.getBean(LockedWork.class);
        // a key of this JVM's own: the second JVM probes at the same time, and the probe does not wait
        String probe = "probe-" + ProcessHandle.current().pid();
        this.unavailableReason = work.annotationLayerPresent(probe) ? null : "annotation layer not present";
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String displayName() {
        return "Leasehold @DistributedLock";
    }

    @Override
    public String unavailableReason() {
        return unavailableReason;
    }

    @Override
    public boolean supportsReadWrite() {
        return true;
    }

    @Override
    public boolean withLock(String key, LockMode mode, Duration wait, Runnable criticalSection) {
        try {
            switch (mode) {
                case READ -> work.read(key, criticalSection);
                case WRITE -> work.write(key, criticalSection);
                default -> work.exclusive(key, criticalSection);
            }
            return true;
        }
        catch (LockAcquisitionException ex) {
            return false;
        }
    }

    @Override
    public void close() {
        context.close();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class BenchmarkApplication {

        @Bean
        LockedWork lockedWork() {
            return new LockedWork();
        }
    }
}
