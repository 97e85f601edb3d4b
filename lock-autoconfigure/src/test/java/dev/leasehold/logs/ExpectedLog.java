package dev.leasehold.logs;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * What a test provokes on purpose is logged here instead of on the console: an ERROR in the build's output then
 * means something went wrong. Open it around the failure the test expects, read {@link #messages()}, close it:
 * the logger writes to the console again. While it is open, a {@code SpringApplication} keeps the test's logging
 * configuration (it would otherwise reload it and drop this capture).
 */
public final class ExpectedLog implements AutoCloseable {

    /**
     * The logger of the release listener container on the Jedis path (Spring Data Redis's
     * {@code RedisMessageListenerContainer} logs a lost subscription connection at ERROR, and restarts it).
     */
    public static final String CUT_SUBSCRIPTIONS = "dev.leasehold.engine.redis.ContainerReleaseSubscriptions$Container";

    private static final String LOGGING_SYSTEM = "org.springframework.boot.logging.LoggingSystem";

    private final Logger logger;

    private final boolean additive;

    private final String loggingSystem;

    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {

        @Override
        protected void append(ILoggingEvent event) {
            events.add(event);
        }
    };

    private ExpectedLog(String loggerName) {
        logger = (Logger) LoggerFactory.getLogger(loggerName);
        additive = logger.isAdditive();
        loggingSystem = System.getProperty(LOGGING_SYSTEM);
        System.setProperty(LOGGING_SYSTEM, "none");
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
        logger.setAdditive(false);
    }

    /** Captures what {@code loggerName} (and the loggers below it) logs until {@link #close()}. */
    public static ExpectedLog capture(String loggerName) {
        return new ExpectedLog(loggerName);
    }

    public static ExpectedLog capture(Class<?> loggingClass) {
        return capture(loggingClass.getName());
    }

    /**
     * Captures {@code loggerName} for each test of a class ({@code @RegisterExtension}), from before its
     * {@code @BeforeEach} methods to after its {@code @AfterEach} ones: what a test's teardown provokes (a server
     * it stops, connections it cuts) is captured too.
     */
    public static EachTest duringEachTest(String loggerName) {
        return new EachTest(loggerName);
    }

    /** See {@link #duringEachTest(String)}. */
    public static final class EachTest implements BeforeEachCallback, AfterEachCallback {

        private final String loggerName;

        private ExpectedLog current;

        private EachTest(String loggerName) {
            this.loggerName = loggerName;
        }

        @Override
        public void beforeEach(ExtensionContext context) {
            current = capture(loggerName);
        }

        @Override
        public void afterEach(ExtensionContext context) {
            if (current != null) {
                current.close();
                current = null;
            }
        }
    }

    /** The messages logged so far, with the message of each one's exception. */
    public List<String> messages() {
        return events.stream()
            .map(event -> event.getLevel() + " " + event.getFormattedMessage()
                    + (event.getThrowableProxy() != null ? " " + event.getThrowableProxy().getMessage() : ""))
            .toList();
    }

    /** Everything logged so far, one text. */
    public String text() {
        return String.join("\n", messages());
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
        logger.setAdditive(additive);
        if (loggingSystem == null) {
            System.clearProperty(LOGGING_SYSTEM);
        }
        else {
            System.setProperty(LOGGING_SYSTEM, loggingSystem);
        }
    }
}
