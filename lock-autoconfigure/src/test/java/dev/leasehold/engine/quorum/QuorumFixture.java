package dev.leasehold.engine.quorum;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Independent {@code redis-server} processes on free loopback ports, and quorum clients on them (each
 * client has its own connections, as another JVM would). Closes everything it made. Registered on a test class
 * ({@link #perClass}), it starts its servers before the class's tests and closes them after, and after each test
 * closes that test's clients and brings every node back (running, answering, every command allowed).
 */
public final class QuorumFixture implements AutoCloseable, BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    public final List<TestRedisServer> servers = new ArrayList<>();

    final List<LockHandle> lost = new CopyOnWriteArrayList<>();

    private final List<AutoCloseable> resources = new ArrayList<>();

    private final int n;

    private final int faked;

    private final Map<String, String> fakedEnvironment;

    /** {@code n} nodes; the first {@code faked} of them run with {@code fakedEnvironment}. */
    QuorumFixture(int n, int faked, Map<String, String> fakedEnvironment) {
        this(n, faked, fakedEnvironment, true);
    }

    public QuorumFixture(int n) {
        this(n, 0, Map.of());
    }

    private QuorumFixture(int n, int faked, Map<String, String> fakedEnvironment, boolean startNow) {
        this.n = n;
        this.faked = faked;
        this.fakedEnvironment = fakedEnvironment;
        if (startNow) {
            start();
        }
    }

    /** For {@code @RegisterExtension static}: {@code n} nodes, started before the class's tests. */
    static QuorumFixture perClass(int n) {
        return new QuorumFixture(n, 0, Map.of(), false);
    }

    private void start() {
        try {
            for (int i = 0; i < n; i++) {
                servers.add(TestRedisServers.startOwn(List.of(), i < faked ? fakedEnvironment : Map.of()));
            }
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (servers.isEmpty()) {
            start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        closeClients();
        lost.clear();
        if (controllable()) {
            healAll();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
        servers.clear();
    }

    static LockEngineSettings settings(Duration leaseTime) {
        return new LockEngineSettings("lock:", leaseTime, Duration.ofMillis(500), Duration.ofMillis(200));
    }

    boolean controllable() {
        return servers.stream().allMatch(TestRedisServer::controllable);
    }

    public QuorumLockServer quorum(LockEngineSettings settings) {
        io.lettuce.core.resource.ClientResources shared = io.lettuce.core.resource.DefaultClientResources.create();
        List<QuorumNode> nodes = new ArrayList<>();
        for (TestRedisServer server : servers) {
            var uri = QuorumNodes.parse(server.url());
            nodes.add(QuorumNode.onLettuce(QuorumNodes.name(uri),
                    QuorumNodes.connectionFactory(uri, settings.redisTimeout(), shared), settings.keyPrefix(), true));
        }
        QuorumLockServer quorum = new QuorumLockServer(nodes, settings.redisTimeout(), settings.leaseTime(), 0.01)
            .closing(() -> shared.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS));
        resources.add(0, quorum);
        return quorum;
    }

    DefaultLockEngine client(LockEngineSettings settings) {
        return client(quorum(settings), settings);
    }

    DefaultLockEngine client(QuorumLockServer quorum, LockEngineSettings settings) {
        DefaultLockEngine engine = new DefaultLockEngine(quorum, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                QuorumFixture.this.lost.add(handle);
            }
        });
        resources.add(0, engine);
        return engine;
    }

    void pause(int... indexes) {
        for (int i : indexes) {
            servers.get(i).pause();
        }
    }

    /** Every node running and answering again. */
    void healAll() {
        for (TestRedisServer server : servers) {
            server.start();
            server.resume();
            server.command("ACL", "SETUSER", "default", "on", "nopass", "~*", "&*", "+@all");
        }
    }

    void closeClients() {
        for (AutoCloseable resource : resources) {
            try {
                resource.close();
            }
            catch (Exception ex) {
                // best effort
            }
        }
        resources.clear();
    }

    @Override
    public void close() {
        closeClients();
        for (TestRedisServer server : servers) {
            try {
                server.close();
            }
            catch (RuntimeException ex) {
                // best effort
            }
        }
    }

    /**
     * The environment that runs {@code redis-server} an hour behind with Debian's libfaketime. Plain
     * {@code faketime} deadlocks with the jemalloc of Debian's redis-server; preloading glibc's
     * {@code libc_malloc_debug.so.0} first avoids it. Installs the {@code faketime} package when it is
     * missing and this runs as root with apt-get; otherwise fails with what to install.
     */
    static Map<String, String> anHourBehind() {
        File libfaketime = new File("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
        if (!libfaketime.isFile() && new File("/usr/bin/apt-get").canExecute()
                && "root".equals(System.getProperty("user.name"))) {
            run("apt-get", "install", "-y", "-qq", "faketime");
        }
        if (!libfaketime.isFile()) {
            throw new IllegalStateException("This test runs Redis servers an hour behind with libfaketime, which is "
                    + "missing (" + libfaketime + "). Install Debian's faketime package: apt-get install faketime");
        }
        File mallocDebug = new File("/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0");
        if (!mallocDebug.isFile()) {
            throw new IllegalStateException("This test needs glibc's " + mallocDebug
                    + " (preloaded before libfaketime, so that redis-server's jemalloc does not deadlock)");
        }
        return Map.of("LD_PRELOAD", mallocDebug + ":" + libfaketime, "FAKETIME", "-1h",
                "FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }

    private static void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).inheritIO().start();
            if (!process.waitFor(180, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        catch (Exception ex) {
            // the check after this says what is missing
        }
    }
}
