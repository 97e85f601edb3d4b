package dev.leasehold.aspect;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.leasehold.DistributedLock;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lock wraps a real JDBC transaction: taken before it begins, released after it committed or rolled
 * back, so the next holder never reads what this one has not committed yet.
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class TransactionOrderingTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return AspectContexts.on(redis.server())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                    TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:accounts;DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false")
            .withUserConfiguration(Beans.class);
    }

    static boolean locked(String key) {
        return DistributedLockAspectTest.lockedInRedis(redis.server(), key);
    }

    @Test
    void theLockIsTakenBeforeTheTransactionBeginsAndReleasedAfterItCommits() {
        runner().run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            Journal journal = context.getBean(Journal.class);
            journal.currentAccount = "a1";
            accounts.deposit("a1", 10, false);
            assertThat(journal.events).containsExactly("before begin: locked=true", "body: in transaction, locked=true",
                    "after commit: locked=true", "after completion 0: locked=true");
            assertThat(locked("account:a1")).as("released after the commit").isFalse();
            assertThat(accounts.balance("a1")).isEqualTo(10);
        });
    }

    @Test
    void theLockIsReleasedAfterARollback() {
        runner().run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            Journal journal = context.getBean(Journal.class);
            journal.currentAccount = "a2";
            assertThatThrownBy(() -> accounts.deposit("a2", 10, true)).hasMessage("rejected");
            assertThat(journal.events).containsExactly("before begin: locked=true", "body: in transaction, locked=true",
                    "after completion 1: locked=true");
            assertThat(locked("account:a2")).isFalse();
            assertThat(accounts.balance("a2")).isZero();
        });
    }

    @Test
    void aLockTakenInsideAnOpenTransactionIsReleasedWhenItCompletesWithOneWarning(CapturedOutput output) {
        runner().run(context -> {
            Transfers transfers = context.getBean(Transfers.class);
            assertThat(transfers.twoStepsInOneTransaction("b1")).as("still locked after the locked call returned, "
                    + "while its transaction was open").isTrue();
            assertThat(locked("audit:b1")).as("released when the transaction completed").isFalse();
            transfers.twoStepsInOneTransaction("b2");
            assertThat(output.getOut().split("was called inside a transaction that was already open", -1))
                .as("one warning per method").hasSize(2);
        });
    }

    @Test
    void theAdviceOrderPropertyPutsTheLockOutsideATransactionAdviceTheApplicationOrderedFirst() {
        ApplicationContextRunner transactionsFirst = runner().withUserConfiguration(TransactionsOrderedFirst.class);
        transactionsFirst.run(context -> {
            Journal journal = context.getBean(Journal.class);
            journal.currentAccount = "d1";
            context.getBean(Accounts.class).deposit("d1", 1, false);
            // released in its own afterCompletion: after the commit, in the order synchronizations were registered
            assertThat(journal.events).as("inside the transaction, yet still released only after it committed")
                .startsWith("before begin: locked=false", "body: in transaction, locked=true",
                        "after commit: locked=true");
            assertThat(locked("account:d1")).isFalse();
        });
        transactionsFirst.withPropertyValues("leasehold.advice-order=-1").run(context -> {
            Journal journal = context.getBean(Journal.class);
            journal.currentAccount = "d2";
            context.getBean(Accounts.class).deposit("d2", 1, false);
            assertThat(journal.events).first().isEqualTo("before begin: locked=true");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = 0)
    static class TransactionsOrderedFirst {
    }

    @Test
    void withoutATransactionTheLockIsReleasedOnReturn() {
        runner().run(context -> {
            Audit audit = context.getBean(Audit.class);
            audit.record("c1");
            assertThat(locked("audit:c1")).isFalse();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {

        @Bean
        Journal journal() {
            return new Journal();
        }

        @Bean
        Accounts accounts(JdbcTemplate jdbc, Journal journal) {
            jdbc.execute("CREATE TABLE IF NOT EXISTS account (id VARCHAR(20) PRIMARY KEY, balance INT)");
            return new Accounts(jdbc, journal);
        }

        @Bean
        Audit audit() {
            return new Audit();
        }

        @Bean
        Transfers transfers(Audit audit, JdbcTemplate jdbc) {
            return new Transfers(audit, jdbc);
        }

        @Bean
        TransactionExecutionListener lockCheckBeforeBegin(Journal journal) {
            return new TransactionExecutionListener() {
                @Override
                public void beforeBegin(TransactionExecution transaction) {
                    journal.events.add("before begin: locked=" + locked("account:" + journal.currentAccount));
                }
            };
        }
    }

    static class Journal {

        final List<String> events = new CopyOnWriteArrayList<>();

        /** The account being deposited to; the listener needs it before the transaction (and the body) begins. */
        volatile String currentAccount;
    }

    public static class Accounts {

        private final JdbcTemplate jdbc;

        private final Journal journal;

        Accounts(JdbcTemplate jdbc, Journal journal) {
            this.jdbc = jdbc;
            this.journal = journal;
        }

        @Transactional
        @DistributedLock(name = "account", key = "#id")
        public void deposit(String id, int amount, boolean reject) {
            journal.events.add("body: " + (TransactionSynchronizationManager.isActualTransactionActive()
                    ? "in transaction" : "no transaction") + ", locked=" + locked("account:" + id));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    journal.events.add("after commit: locked=" + locked("account:" + id));
                }

                @Override
                public void afterCompletion(int status) {
                    journal.events.add("after completion " + status + ": locked=" + locked("account:" + id));
                }
            });
            jdbc.update("MERGE INTO account KEY (id) VALUES (?, COALESCE((SELECT balance FROM account WHERE id = ?), 0) + ?)",
                    id, id, amount);
            if (reject) {
                throw new IllegalStateException("rejected");
            }
        }

        public int balance(String id) {
            List<Integer> balance = jdbc.queryForList("SELECT balance FROM account WHERE id = ?", Integer.class, id);
            return balance.isEmpty() ? 0 : balance.get(0);
        }
    }

    public static class Audit {

        @DistributedLock(name = "audit", key = "#id")
        public void record(String id) {
            if (!locked("audit:" + id)) {
                throw new IllegalStateException("ran without its lock");
            }
        }
    }

    public static class Transfers {

        private final Audit audit;

        private final JdbcTemplate jdbc;

        Transfers(Audit audit, JdbcTemplate jdbc) {
            this.audit = audit;
            this.jdbc = jdbc;
        }

        @Transactional
        public boolean twoStepsInOneTransaction(String id) {
            audit.record(id);
            jdbc.queryForObject("SELECT 1", Integer.class);
            return locked("audit:" + id);
        }
    }
}
