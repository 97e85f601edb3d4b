package dev.leasehold.test.redis;

import org.jspecify.annotations.Nullable;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A few lines of RESP so test support can talk to a server without depending on a Redis client. */
final class RespClient {

    private static final int TIMEOUT_MILLIS = 2_000;

    private RespClient() {
    }

    static String command(String host, int port, String... args) {
        return commands(host, port, List.<String[]>of(args)).get(0);
    }

    /** One command's reply as parsed: a String, null, or a List of those (for SCAN). */
    static @Nullable Object reply(String host, int port, String... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            socket.getOutputStream().write(encode(args));
            socket.getOutputStream().flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Redis at " + host + ":" + port + " did not answer", ex);
        }
    }

    /** Sends the commands in order over one connection (so state such as AUTH carries over). */
    static List<String> commands(String host, int port, List<String[]> commands) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            BufferedInputStream in = new BufferedInputStream(socket.getInputStream());
            List<String> replies = new ArrayList<>();
            for (String[] args : commands) {
                out.write(encode(args));
                out.flush();
                replies.add(String.valueOf(read(in)));
            }
            return replies;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Redis at " + host + ":" + port + " did not answer", ex);
        }
    }

    private static byte[] encode(String... args) {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            request.writeBytes(bytes);
            request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        return request.toByteArray();
    }

    static boolean answersPing(String host, int port) {
        try {
            return "PONG".equals(command(host, port, "PING"));
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    static void awaitPing(String host, int port, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!answersPing(host, port)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Redis at " + host + ":" + port + " did not answer PING within " + timeout);
            }
            try {
                Thread.sleep(20);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
    }

    private static @Nullable Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = readLine(in);
        switch (type) {
            case '+':
            case ':':
                return line;
            case '-':
                throw new IllegalStateException("Redis error: " + line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length);
                readLine(in);
                return new String(bytes, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("Unexpected RESP type " + (char) type);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\r') {
            if (b < 0) {
                throw new IOException("Connection closed");
            }
            line.write(b);
        }
        in.read();
        return line.toString(StandardCharsets.UTF_8);
    }
}
