package dev.leasehold.autoconfigure;

import dev.leasehold.DistributedLock;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** Startup failures reach the user as Spring Boot's "problem / action" report. */
class FailureAnalysisTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void aBadAnnotationIsExplainedWithWhatToDo() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, AopAutoConfiguration.class,
                    LeaseholdAutoConfiguration.class, LeaseholdAnnotationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port())
            .withUserConfiguration(BadWait.class)
            .run(context -> {
                assertThat(context).hasFailed();
                FailureAnalysis analysis = new LeaseholdFailureAnalyzer().analyze(context.getStartupFailure());
                assertThat(analysis).isNotNull();
                assertThat(analysis.getDescription()).contains("Job.run").contains("waitTime").contains("soon");
                assertThat(analysis.getAction()).contains("500ms");
            });
    }

    @Test
    void otherFailuresAreLeftToOtherAnalyzers() {
        assertThat(new LeaseholdFailureAnalyzer().analyze(new IllegalStateException("unrelated"))).isNull();
    }

    @Configuration(proxyBeanMethods = false)
    static class BadWait {

        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {

        @DistributedLock(waitTime = "soon")
        public void run() {
        }
    }
}
