package dev.leasehold.benchmarks.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * Watches {@code MONITOR} while a short run goes on, to tell the commands clients sent (each a round trip)
 * from the commands scripts ran (shown with the source {@code [0 lua]}). Pub/sub messages pushed to
 * subscribers are not commands and do not show; SUBSCRIBE and UNSUBSCRIBE do, and count as round trips.
 */
public final class MonitorSample implements AutoCloseable {

    private final Socket socket;

    private final Thread reader;

    private final Map<String, Long> clientCommands = new TreeMap<>();

    private final Map<String, Long> scriptCommands = new TreeMap<>();

    private MonitorSample(Socket socket) {
        this.socket = socket;
        this.reader = new Thread(this::read, "bench-monitor");
        this.reader.setDaemon(true);
    }

    public static MonitorSample start(String host, int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), 2000);
        OutputStream out = socket.getOutputStream();
        out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        MonitorSample sample = new MonitorSample(socket);
        sample.reader.start();
        return sample;
    }

    private void read() {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                count(line);
            }
        }
        catch (IOException ex) {
            // closed by close(): the sample is over
        }
    }

    /** {@code +1700000000.123456 [0 127.0.0.1:53412] "EVALSHA" "ab12..." "4" ...} */
    private void count(String line) {
        int sourceEnd = line.indexOf("] \"");
        if (!line.startsWith("+") || sourceEnd < 0) {
            return;
        }
        int nameStart = sourceEnd + 3;
        int nameEnd = line.indexOf('"', nameStart);
        if (nameEnd < 0) {
            return;
        }
        String command = line.substring(nameStart, nameEnd).toLowerCase();
        if (ServerCounters.BOOKKEEPING.contains(command)) {
            return;
        }
        boolean fromScript = line.substring(0, sourceEnd).endsWith(" lua");
        synchronized (this) {
            (fromScript ? scriptCommands : clientCommands).merge(command, 1L, Long::sum);
        }
    }

    /** Commands sent by clients, per command. */
    public synchronized Map<String, Long> clientCommands() {
        return new TreeMap<>(clientCommands);
    }

    /** Commands run inside scripts, per command. */
    public synchronized Map<String, Long> scriptCommands() {
        return new TreeMap<>(scriptCommands);
    }

    /** Stops watching (after a short pause so the last lines arrive). */
    @Override
    public void close() throws InterruptedException {
        Thread.sleep(200);
        try {
            socket.close();
        }
        catch (IOException ex) {
            // nothing to do
        }
        reader.join(2000);
    }
}
