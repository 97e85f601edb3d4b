package dev.leasehold.test.fault;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The proxy between a plain socket client and a real Redis server. */
@Timeout(60)
class FaultProxyTest {

    private static TestRedisServer redis;

    private FaultProxy proxy;

    @BeforeAll
    static void startRedis() {
        redis = TestRedisServers.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void startProxy() {
        proxy = FaultProxy.start(redis.host(), redis.port());
    }

    @AfterEach
    void closeProxy() {
        proxy.close();
    }

    @Test
    void forwardsCommandsBothWays() throws IOException {
        try (Client client = new Client(proxy)) {
            assertThat(client.call("SET", "proxied", "yes")).isEqualTo("+OK");
            assertThat(client.call("GET", "proxied")).isEqualTo("$3");
        }
        assertThat(redis.command("GET", "proxied")).isEqualTo("yes");
    }

    @Test
    void latencyDelaysEachDirection() throws IOException {
        try (Client client = new Client(proxy)) {
            client.call("PING"); // connected and warm
            proxy.latency(Duration.ofMillis(150));
            long started = System.nanoTime();
            assertThat(client.call("PING")).isEqualTo("+PONG");
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            // once on the way in, once on the way out
            assertThat(tookMillis).isGreaterThanOrEqualTo(300);
            proxy.latency(Duration.ZERO);
            started = System.nanoTime();
            client.call("PING");
            assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(300);
        }
    }

    @Test
    void blackholeHoldsTrafficWithSocketsOpenAndHealDeliversItInOrder() throws IOException {
        try (Client client = new Client(proxy)) {
            client.call("PING");
            proxy.blackhole();
            client.send("INCR", "held");
            client.send("INCR", "held");
            // no reply, no reset: the socket just hangs
            assertThatThrownBy(() -> client.readLine(Duration.ofMillis(500))).isInstanceOf(SocketTimeoutException.class);
            assertThat(redis.command("GET", "held")).isEqualTo("null");
            assertThat(proxy.openConnections()).isEqualTo(1);

            proxy.heal();
            // the commands sent during the stall run late, in order
            assertThat(client.readLine(Duration.ofSeconds(5))).isEqualTo(":1");
            assertThat(client.readLine(Duration.ofSeconds(5))).isEqualTo(":2");
            assertThat(client.call("PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void dropResetsEveryConnectionAndAcceptsNewOnes() throws IOException {
        Client first = new Client(proxy);
        Client second = new Client(proxy);
        first.call("PING");
        second.call("PING");
        String before = redis.command("INFO", "clients");
        assertThat(proxy.openConnections()).isEqualTo(2);

        proxy.drop();

        assertThatThrownBy(() -> {
            first.send("PING");
            first.readLine(Duration.ofSeconds(5));
        }).isInstanceOf(IOException.class);
        assertThat(proxy.openConnections()).isZero();
        // the server saw its side closed too
        waitUntil(() -> connectedClients(redis.command("INFO", "clients")) < connectedClients(before));
        first.close();
        second.close();

        try (Client third = new Client(proxy)) {
            assertThat(third.call("PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void closeResetsConnectionsAndStopsListening() throws IOException {
        Client client = new Client(proxy);
        client.call("PING");
        int port = proxy.port();
        proxy.close();
        assertThatThrownBy(() -> {
            client.send("PING");
            client.readLine(Duration.ofSeconds(5));
        }).isInstanceOf(IOException.class);
        client.close();
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(IOException.class);
        waitUntil(() -> Thread.getAllStackTraces().keySet().stream()
            .noneMatch(thread -> thread.getName().startsWith("fault-proxy-" + port)));
    }

    private static int connectedClients(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("connected_clients:")) {
                return Integer.parseInt(line.substring("connected_clients:".length()).trim());
            }
        }
        throw new IllegalStateException("no connected_clients in " + info);
    }

    private static void waitUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition met within 5 s").isLessThan(deadline);
            try {
                Thread.sleep(10);
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    /** A raw RESP client over one socket: replies are read as their first line. */
    private static final class Client implements AutoCloseable {

        private final Socket socket;

        private final OutputStream out;

        private final InputStream in;

        Client(FaultProxy proxy) throws IOException {
            socket = new Socket(proxy.host(), proxy.port());
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream());
        }

        String call(String... args) throws IOException {
            send(args);
            String line = readLine(Duration.ofSeconds(5));
            if (line.startsWith("$") && !line.equals("$-1")) {
                readLine(Duration.ofSeconds(5)); // the bulk string itself
            }
            return line;
        }

        void send(String... args) throws IOException {
            StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args) {
                request.append('$').append(arg.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(arg).append("\r\n");
            }
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        String readLine(Duration timeout) throws IOException {
            socket.setSoTimeout((int) timeout.toMillis());
            StringBuilder line = new StringBuilder();
            int b;
            while ((b = in.read()) != '\r') {
                if (b < 0) {
                    throw new IOException("connection closed");
                }
                line.append((char) b);
            }
            in.read();
            return line.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
