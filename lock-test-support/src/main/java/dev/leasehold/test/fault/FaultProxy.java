package dev.leasehold.test.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A loopback TCP proxy for fault tests: point a client at {@link #port()} instead of the server and inject
 * network faults between them while the test runs.
 * <ul>
 * <li>{@link #latency(Duration)}: every chunk of bytes is delivered that long after it was read, both ways;</li>
 * <li>{@link #blackhole()}: nothing is forwarded either way, but every socket stays open (a stalled network, not a
 * closed one): the client's calls hang, as they would behind a dead switch;</li>
 * <li>{@link #heal()}: forwarding resumes, and what was sent during the black hole is delivered then, in order
 * (so a command sent during the stall can still run late on the server);</li>
 * <li>{@link #drop()}: every open connection is reset (RST to both sides); new connections are accepted.</li>
 * </ul>
 * Each connection costs four daemon threads (a reader and a writer per direction, so latency does not add up); at
 * most {@code maxConnections} are open at once, further ones are refused. {@link #close()} resets every connection
 * and stops every thread. It listens on 127.0.0.1 only.
 */
public final class FaultProxy implements AutoCloseable {

    /** Connections beyond this many are closed at once (a test leaking connections fails loudly). */
    public static final int DEFAULT_MAX_CONNECTIONS = 64;

    private final InetSocketAddress upstream;

    private final ServerSocket listener;

    private final int maxConnections;

    private final Set<Link> links = ConcurrentHashMap.newKeySet();

    private final AtomicInteger accepted = new AtomicInteger();

    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition healed = stateLock.newCondition();

    private boolean blackholed; // guarded by stateLock

    private volatile long latencyNanos;

    private volatile boolean closed;

    private final Thread acceptor;

    private FaultProxy(String upstreamHost, int upstreamPort, int maxConnections) {
        this.upstream = new InetSocketAddress(upstreamHost, upstreamPort);
        this.maxConnections = maxConnections;
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        this.acceptor = daemon("fault-proxy-accept-" + port(), this::acceptLoop);
        this.acceptor.start();
    }

    /** A proxy on a free loopback port in front of {@code upstreamHost:upstreamPort}, forwarding normally. */
    public static FaultProxy start(String upstreamHost, int upstreamPort) {
        return new FaultProxy(upstreamHost, upstreamPort, DEFAULT_MAX_CONNECTIONS);
    }

    public static FaultProxy start(String upstreamHost, int upstreamPort, int maxConnections) {
        return new FaultProxy(upstreamHost, upstreamPort, maxConnections);
    }

    /** Always 127.0.0.1 (the proxy listens on loopback only). */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Delays every chunk by {@code latency} in each direction (zero: none). */
    public FaultProxy latency(Duration latency) {
        this.latencyNanos = Math.max(0, latency.toNanos());
        return this;
    }

    /** Stops forwarding both ways; sockets stay open and bytes sent meanwhile are held until {@link #heal()}. */
    public void blackhole() {
        blackholed(true);
    }

    /** Forwards again, first what was held during the black hole. */
    public void heal() {
        blackholed(false);
    }

    private void blackholed(boolean stalled) {
        stateLock.lock();
        try {
            blackholed = stalled;
            healed.signalAll();
        }
        finally {
            stateLock.unlock();
        }
    }

    public boolean isBlackholed() {
        stateLock.lock();
        try {
            return blackholed;
        }
        finally {
            stateLock.unlock();
        }
    }

    /** Resets every open connection (both sides see a connection reset); the proxy keeps accepting. */
    public void drop() {
        for (Link link : links) {
            link.reset();
        }
    }

    /** Connections open through the proxy now. */
    public int openConnections() {
        return links.size();
    }

    /** Connections accepted since the start (including those dropped or closed since). */
    public int acceptedConnections() {
        return accepted.get();
    }

    @Override
    public void close() {
        closed = true;
        heal();
        try {
            listener.close();
        }
        catch (IOException ex) {
            // closing anyway
        }
        drop();
        try {
            acceptor.join(2_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        for (Link link : links) {
            link.join();
        }
    }

    @Override
    public String toString() {
        return "FaultProxy " + host() + ":" + port() + " -> " + upstream.getHostString() + ":" + upstream.getPort();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            }
            catch (IOException ex) {
                return; // closed
            }
            accepted.incrementAndGet();
            if (links.size() >= maxConnections) {
                closeQuietly(client);
                continue;
            }
            Socket server = new Socket();
            try {
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(upstream, 2_000);
            }
            catch (IOException ex) {
                closeQuietly(server);
                closeQuietly(client);
                continue;
            }
            Link link = new Link(client, server);
            links.add(link);
            link.start();
        }
    }

    /** Blocks while the proxy is black-holed; false when the proxy closed meanwhile. */
    private boolean awaitForwarding() throws InterruptedException {
        stateLock.lock();
        try {
            while (blackholed && !closed) {
                healed.await();
            }
            return !closed;
        }
        finally {
            stateLock.unlock();
        }
    }

    private static Thread daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        }
        catch (IOException ex) {
            // nothing to do
        }
    }

    /** One client connection and its upstream connection: a pipe each way. */
    private final class Link {

        private final Socket client;

        private final Socket server;

        private final Pipe up;

        private final Pipe down;

        private final AtomicBoolean done = new AtomicBoolean();

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
            String name = "fault-proxy-" + port() + "-" + client.getPort();
            this.up = new Pipe(name + "-up", client, server, this);
            this.down = new Pipe(name + "-down", server, client, this);
        }

        void start() {
            up.start();
            down.start();
        }

        /** Abortive close of both sockets: SO_LINGER 0 makes close() send RST. */
        void reset() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            for (Socket socket : new Socket[] { client, server }) {
                try {
                    socket.setSoLinger(true, 0);
                }
                catch (SocketException ex) {
                    // already closed
                }
                closeQuietly(socket);
            }
            up.stop();
            down.stop();
            links.remove(this);
        }

        /** Orderly close once either side has closed (the other side sees end of stream). */
        void finish() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            closeQuietly(client);
            closeQuietly(server);
            up.stop();
            down.stop();
            links.remove(this);
        }

        void join() {
            up.join();
            down.join();
        }
    }

    /** Reads from one socket into a bounded queue; a second thread writes it out after the latency. */
    private final class Pipe {

        private final Socket from;

        private final Socket to;

        private final Link link;

        private final BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(256);

        private final Thread reader;

        private final Thread writer;

        Pipe(String name, Socket from, Socket to, Link link) {
            this.from = from;
            this.to = to;
            this.link = link;
            this.reader = daemon(name + "-read", this::read);
            this.writer = daemon(name + "-write", this::write);
        }

        void start() {
            reader.start();
            writer.start();
        }

        void stop() {
            writer.interrupt();
            reader.interrupt();
        }

        void join() {
            try {
                reader.join(2_000);
                writer.join(2_000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        private void read() {
            byte[] buffer = new byte[16 * 1024];
            try {
                var in = from.getInputStream();
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        queue.put(Chunk.END);
                        return;
                    }
                    queue.put(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
                }
            }
            catch (IOException ex) {
                link.reset();
            }
            catch (InterruptedException ex) {
                // stopped
            }
        }

        private void write() {
            try {
                var out = to.getOutputStream();
                while (true) {
                    Chunk chunk = queue.take();
                    long due = chunk.readAt + latencyNanos;
                    long wait;
                    while ((wait = due - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                        if (Thread.interrupted()) {
                            return;
                        }
                    }
                    if (!awaitForwarding()) {
                        return;
                    }
                    if (chunk == Chunk.END) {
                        link.finish();
                        return;
                    }
                    out.write(chunk.bytes);
                    out.flush();
                }
            }
            catch (IOException ex) {
                link.reset();
            }
            catch (InterruptedException ex) {
                // stopped
            }
        }
    }

    private record Chunk(byte[] bytes, long readAt) {

        static final Chunk END = new Chunk(new byte[0], 0);
    }
}
