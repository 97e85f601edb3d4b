package dev.leasehold.explorer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockMode;
import dev.leasehold.engine.EngineFixture;
import dev.leasehold.engine.server.FairQueue;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer;
import dev.leasehold.engine.server.QueueTry;
import dev.leasehold.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated Redis answers as the real scripts do: the same random commands of readers and writers (acquire in
 * every queue try, with and without the writer-waiting marker, release with and without a hold, renew, withdraw,
 * is-locked) on one key, against a real {@code redis-server} and {@link SimRedis}, compared answer by answer, and the
 * queue's members after each. Leases of 30 s, so that no lease or entry runs out on either clock (the simulated one
 * stands still); the fencing tokens, which come from the clocks, are not compared.
 */
class SimReadersMatchScriptsTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    private static final long LEASE = 30_000;

    @Test
    void readersAndWritersGetTheScriptsAnswers() throws Exception {
        EngineFixture fixture = new EngineFixture(redis.server(), EngineFixture.ServerKind.LETTUCE);
        try {
            LockServer real = fixture.server(fixture.connectionFactory(Duration.ofSeconds(5), null, null), "lock:");
            for (int seed = 1; seed <= 40; seed++) {
                compare(real, seed);
            }
        }
        finally {
            fixture.close();
        }
    }

    private static void compare(LockServer real, long seed) throws Exception {
        Random random = new Random(seed);
        SimRedis sim = new SimRedis(new SimWorld(), FairQueue.DEFAULTS, (channel, message) -> {
        });
        LockKeys keys = LockKeys.of("lock:", "differential-" + seed);
        String[] waiters = { "a", "b", "c" };
        List<String[]> granted = new ArrayList<>(); // token, mode
        for (int step = 0; step < 60; step++) {
            String what;
            Object expected;
            Object actual;
            int pick = random.nextInt(10);
            if (pick < 5 || granted.isEmpty()) {
                boolean shared = random.nextInt(3) == 0;
                String token = "t" + seed + "-" + step;
                String waiter = waiters[random.nextInt(waiters.length)];
                QueueTry queueTry = QueueTry.values()[random.nextInt(QueueTry.values().length)];
                long writerWaiting = shared || random.nextBoolean() ? 0 : 10_000;
                what = "acquire " + (shared ? "READ " : "WRITE ") + token + " " + waiter + " " + queueTry + " "
                        + writerWaiting;
                actual = await(real.acquire(keys, shared ? LockMode.READ : LockMode.WRITE, token, LEASE, writerWaiting,
                        waiter, queueTry)).granted();
                expected = sim.acquire(keys, shared, token, LEASE, writerWaiting, waiter, queueTry).granted();
                if ((Boolean) actual) {
                    granted.add(new String[] { token, shared ? "READ" : "WRITE" });
                }
            }
            else if (pick < 8) {
                String[] lock = granted.get(random.nextInt(granted.size()));
                boolean shared = lock[1].equals("READ");
                long keep = random.nextInt(3) == 0 ? 10_000 : 0;
                what = "release " + lock[1] + " " + lock[0] + " keep " + keep;
                LockMode mode = shared ? LockMode.READ : LockMode.WRITE;
                actual = await(keep > 0 ? real.release(keys, mode, lock[0], keep) : real.release(keys, mode, lock[0]));
                expected = sim.release(keys, shared, lock[0], keep);
            }
            else if (pick < 9) {
                String[] lock = granted.get(random.nextInt(granted.size()));
                boolean shared = lock[1].equals("READ");
                what = "renew " + lock[1] + " " + lock[0];
                actual = await(real.renew(keys, shared ? LockMode.READ : LockMode.WRITE, lock[0], LEASE));
                expected = sim.renew(keys, shared, lock[0], LEASE);
            }
            else if (random.nextBoolean()) {
                String waiter = waiters[random.nextInt(waiters.length)];
                what = "withdraw " + waiter;
                actual = await(real.withdraw(keys, waiter));
                expected = sim.withdraw(keys, waiter);
            }
            else {
                what = "is-locked";
                actual = await(real.isLocked(keys));
                expected = sim.isLocked(keys);
            }
            assertThat(actual).as("seed %d step %d: %s", seed, step, what).isEqualTo(expected);
            String members = redis.server().command("ZRANGE", keys.queue(), "0", "-1"); // "[a|W, b|R]"
            assertThat(members.length() <= 2 ? List.of() : List.of(members.substring(1, members.length() - 1).split(", ")))
                .as("seed %d step %d: the queue after %s", seed, step, what).isEqualTo(sim.queued(keys));
        }
    }

    private static <T> T await(CompletableFuture<T> step) throws Exception {
        return step.get(5, TimeUnit.SECONDS);
    }
}
