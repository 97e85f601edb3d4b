package dev.leasehold.samples.ticketoffice.demo;

import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The demo's load: creates a show on the first node, sends booking attempts from many client threads to
 * every node in turn, shows progress, then prints what the nodes and the database say. Only the sample's
 * public HTTP API and Actuator are used.
 * <pre>
 * LoadDriver --nodes http://127.0.0.1:8081,http://127.0.0.1:8082 [--attempts 2000] [--seats 500]
 *            [--threads 32] [--no-lock] [--kill-at-half pid@host:port,pid@host:port] [--warm-up 200]
 * </pre>
 * {@code --warm-up} requests per node come first ({@link #warmUp()}; 0: none).
 * {@code --kill-at-half} (the demo's {@code --quorum}) kills those Redis processes (SIGKILL) once half of the
 * attempts were answered, and the report then shows the quorum's per-node health.
 * Exits with 1 when a locked run oversold (that would be a bug), 2 on bad arguments or unreachable nodes.
 */
public final class LoadDriver {

    private final List<String> nodes;

    private final int attempts;

    private final int seats;

    private final int threads;

    private final boolean locked;

    private final PrintStream out;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final JsonMapper json = JsonMapper.builder().build();

    private final AtomicInteger sent = new AtomicInteger();

    private final AtomicInteger booked = new AtomicInteger();

    private final AtomicInteger soldOut = new AtomicInteger();

    private final AtomicInteger busy = new AtomicInteger();

    private final AtomicInteger failed = new AtomicInteger();

    private volatile String lastErrorText = "";

    private volatile long showId;

    private volatile long startedAt;

    /** The quorum fault to inject, or null. */
    private final QuorumFault fault;

    /** Requests per node before the load ({@link #warmUp()}); 0: none. */
    private int warmUpRequests = 200;

    public LoadDriver(List<String> nodes, int attempts, int seats, int threads, boolean locked, PrintStream out) {
        this(nodes, attempts, seats, threads, locked, null, out);
    }

    LoadDriver(List<String> nodes, int attempts, int seats, int threads, boolean locked, QuorumFault fault, PrintStream out) {
        this.fault = fault;
        this.nodes = List.copyOf(nodes);
        this.attempts = attempts;
        this.seats = seats;
        this.threads = threads;
        this.locked = locked;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        List<String> nodes = new ArrayList<>();
        int attempts = 2000;
        int seats = 500;
        int threads = 32;
        boolean locked = true;
        QuorumFault fault = null;
        int warmUp = 200;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--nodes" -> nodes.addAll(List.of(args[++i].split(",")));
                case "--attempts" -> attempts = Integer.parseInt(args[++i]);
                case "--seats" -> seats = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--no-lock" -> locked = false;
                case "--kill-at-half" -> fault = QuorumFault.parse(args[++i]);
                case "--warm-up" -> warmUp = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("Unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (nodes.isEmpty()) {
            System.err.println("Give the nodes: --nodes http://127.0.0.1:8081,http://127.0.0.1:8082");
            System.exit(2);
        }
        LoadDriver driver = new LoadDriver(nodes, attempts, seats, threads, locked, fault, System.out).warmUp(warmUp);
        Report report = driver.run();
        System.exit(report.locked() && report.oversold() > 0 ? 1 : 0);
    }

    /** Requests per node before the load; 0: none. */
    public LoadDriver warmUp(int requestsPerNode) {
        this.warmUpRequests = requestsPerNode;
        return this;
    }

    public Report run() throws Exception {
        if (warmUpRequests > 0) {
            warmUp();
        }
        long showId = createShow();
        List<Counts> before = new ArrayList<>();
        for (String node : nodes) {
            before.add(counts(node));
        }
        out.printf(Locale.ROOT, "%d booking attempts (1 seat each) for %d seats from %d client threads, through %d nodes, %s%n",
                attempts, seats, threads, nodes.size(), locked ? "WITH the lock" : "WITHOUT the lock (--no-lock)");
        long startedAt = System.nanoTime();
        this.startedAt = startedAt;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> clients = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            clients.add(pool.submit(this::client));
        }
        pool.shutdown();
        boolean tty = System.console() != null;
        long lastPrinted = 0;
        while (!pool.awaitTermination(200, TimeUnit.MILLISECONDS)) {
            long now = System.nanoTime();
            if (tty) {
                out.print("\r  " + progress(now - startedAt));
                out.flush();
            }
            else if (now - lastPrinted > TimeUnit.SECONDS.toNanos(1)) {
                out.println("  " + progress(now - startedAt));
                lastPrinted = now;
            }
        }
        long elapsedNanos = System.nanoTime() - startedAt;
        out.print(tty ? "\r  " + progress(elapsedNanos) + "\n" : "  " + progress(elapsedNanos) + "\n");
        for (Future<?> client : clients) {
            client.get();
        }
        return report(showId, before, elapsedNanos);
    }

    private String progress(long elapsedNanos) {
        int done = booked.get() + soldOut.get() + busy.get() + failed.get();
        return String.format(Locale.ROOT, "%5.1fs  attempts %4d/%d  booked %4d  sold out %4d  busy %d  errors %d",
                elapsedNanos / 1e9, done, attempts, booked.get(), soldOut.get(), busy.get(), failed.get());
    }

    private void client() {
        String path = locked ? "/bookings" : "/unlocked-bookings";
        int attempt;
        while ((attempt = sent.getAndIncrement()) < attempts) {
            String node = nodes.get(attempt % nodes.size());
            try {
                HttpResponse<String> response = post(node + "/api/shows/" + showId + path,
                        "{\"seats\":1,\"customer\":\"client-" + attempt + "\"}");
                switch (response.statusCode()) {
                    case 201 -> booked.incrementAndGet();
                    case 409 -> soldOut.incrementAndGet();
                    case 503 -> busy.incrementAndGet();
                    default -> error("HTTP " + response.statusCode() + " " + response.body());
                }
            }
            catch (Exception ex) {
                error(ex.toString());
            }
            if (fault != null) {
                int answered = booked.get() + soldOut.get() + busy.get() + failed.get();
                fault.afterAnswer(answered, attempts, startedAt).ifPresent(line -> {
                    synchronized (out) {
                        out.println(System.console() != null ? "\n  " + line : "  " + line);
                    }
                });
            }
        }
    }

    private void error(String text) {
        failed.incrementAndGet();
        lastErrorText = text.length() > 200 ? text.substring(0, 200) : text;
    }

    private long createShow() throws Exception {
        showId = newShow("Demo " + java.time.LocalTime.now().withNano(0), seats);
        return showId;
    }

    private long newShow(String title, int seats) throws Exception {
        HttpResponse<String> response = post(nodes.get(0) + "/api/shows",
                "{\"title\":\"" + title + "\",\"seats\":" + seats + ",\"priceCents\":5000}");
        if (response.statusCode() != 201) {
            throw new IllegalStateException("Could not create the show: HTTP " + response.statusCode() + " " + response.body());
        }
        return json.readTree(response.body()).path("id").asLong();
    }

    /**
     * Brings every node past its first requests (class loading, JIT compilation, connections, the first
     * lock waits' subscriptions), which would otherwise make the load's first bookings wait seconds, at
     * whichever node they happen to reach; with requests that take no EXCLUSIVE lock, so that the lock-wait
     * figures (EXCLUSIVE) are the load's alone. On a show of its own: unlocked bookings one at a time (they
     * never race), then price changes (WRITE lock) from all the clients at once.
     */
    private void warmUp() throws Exception {
        long show = newShow("Warm-up " + java.time.LocalTime.now().withNano(0), warmUpRequests * nodes.size());
        out.printf(Locale.ROOT, "Warming up the nodes on show #%d: %d unlocked bookings one at a time, then %d price "
                + "changes (WRITE lock) from %d clients, per node%n", show, warmUpRequests, warmUpRequests, threads);
        for (int i = 0; i < warmUpRequests; i++) {
            for (String node : nodes) {
                expect(201, post(node + "/api/shows/" + show + "/unlocked-bookings", "{\"seats\":1,\"customer\":\"warm-up\"}"));
            }
        }
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> clients = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            clients.add(pool.submit(() -> {
                for (int i; (i = next.getAndIncrement()) < warmUpRequests * nodes.size();) {
                    expect(200, send(HttpRequest.newBuilder(URI.create(nodes.get(i % nodes.size()) + "/api/shows/" + show + "/price"))
                        .PUT(HttpRequest.BodyPublishers.ofString("{\"priceCents\":" + (5000 + i % 100) + "}"))));
                }
                return null;
            }));
        }
        pool.shutdown();
        for (Future<?> client : clients) {
            client.get();
        }
    }

    private static void expect(int status, HttpResponse<String> response) {
        if (response.statusCode() != status) {
            throw new IllegalStateException("Warm-up request failed: HTTP " + response.statusCode() + " " + response.body());
        }
    }

    private Report report(long showId, List<Counts> before, long elapsedNanos) throws Exception {
        JsonNode show = json.readTree(get(nodes.get(0) + "/api/shows/" + showId));
        long sold = show.path("booked").asLong();
        long oversold = show.path("oversold").asLong();
        long acquisitions = 0;
        long lost = 0;
        List<LockWaits> waits = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            String node = nodes.get(i);
            Counts after = counts(node);
            acquisitions += after.acquired() - before.get(i).acquired();
            lost += after.lost() - before.get(i).lost();
            waits.add(lockWaits(node));
        }
        double seconds = elapsedNanos / 1e9;
        Report report = new Report(locked, seats, sold, Math.max(0, seats - sold), oversold, booked.get(), soldOut.get(),
                busy.get(), failed.get(), acquisitions, lost, seconds, List.copyOf(waits));
        out.println();
        out.println("==================== Leasehold demo report ====================");
        out.printf(Locale.ROOT, "  mode              %s%n", locked ? "@DistributedLock(name = \"show\", key = \"#showId\")" : "NO LOCK (--no-lock)");
        out.printf(Locale.ROOT, "  show              #%d, %d seats%n", showId, seats);
        out.printf(Locale.ROOT, "  attempts          %d in %.1f s (%d booked, %d sold out, %d busy, %d errors)%n", attempts,
                seconds, booked.get(), soldOut.get(), busy.get(), failed.get());
        out.printf(Locale.ROOT, "  seats sold        %d (database: sum of bookings)%n", sold);
        out.printf(Locale.ROOT, "  OVERSOLD          %d%s%n", oversold, locked ? (oversold == 0 ? "   (must be 0: it is)" : "   BUG: must be 0")
                : (oversold > 0 ? "   <- what the lock prevents" : "   (no race this time; run again)"));
        if (locked) {
            for (LockWaits wait : waits) {
                out.printf(Locale.ROOT, "  lock wait         %s p50 %.1f ms, p99 %.1f ms, max %.1f ms (last minute; %d waits in all)%n",
                        wait.node(), wait.p50Millis(), wait.p99Millis(), wait.maxMillis(), wait.count());
            }
        }
        else {
            out.println("  lock wait         none: the bookings took no lock");
        }
        out.printf(Locale.ROOT, "  acquisitions/s    %.0f (%d lock acquisitions over all nodes)%n", acquisitions / seconds, acquisitions);
        out.printf(Locale.ROOT, "  lost locks        %d%n", lost);
        if (failed.get() > 0) {
            out.println("  last error        " + lastErrorText);
        }
        if (fault != null) {
            for (String line : fault.reportLines(nodes, attempts, http, json)) {
                out.println("  " + line);
            }
        }
        for (String node : nodes) {
            out.println("  live page         " + node + "/");
        }
        out.println("  one key           " + nodes.get(0) + "/actuator/leasehold/show:" + showId);
        out.println("===============================================================");
        return report;
    }

    private Counts counts(String node) throws Exception {
        return new Counts(metric(node, "leasehold.lock.acquire", "tag=result:acquired&tag=mode:EXCLUSIVE", "COUNT"),
                metric(node, "leasehold.lock.lost", "", "COUNT"));
    }

    /** One node's lock waits, every figure from one snapshot of its timer (the sample's /api/lock-waits). */
    private LockWaits lockWaits(String node) throws Exception {
        JsonNode waits = json.readTree(get(node + "/api/lock-waits"));
        return new LockWaits(node, waits.path("count").asLong(), waits.path("p50Millis").asDouble(),
                waits.path("p99Millis").asDouble(), waits.path("maxMillis").asDouble());
    }

    private long metric(String node, String name, String tags, String statistic) throws Exception {
        return Math.round(metricValue(node, name, tags, statistic));
    }

    private double metricValue(String node, String name, String tags, String statistic) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create(node + "/actuator/metrics/" + name + (tags.isEmpty() ? "" : "?" + tags)))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 404) {
            return 0; // not recorded yet on that node
        }
        for (JsonNode measurement : json.readTree(response.body()).path("measurements")) {
            if (statistic.equals(measurement.path("statistic").asString())) {
                return measurement.path("value").asDouble();
            }
        }
        return 0;
    }

    private HttpResponse<String> post(String url, String body) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String get(String url) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(url + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return response.body();
    }

    private record Counts(long acquired, long lost) {
    }

    /** What the run did, as the database and the nodes' meters say. */
    public record Report(boolean locked, int seats, long sold, long left, long oversold, int booked, int soldOut, int busy,
            int errors, long acquisitions, long lost, double seconds, List<LockWaits> lockWaits) {
    }

    /** A node's lock waits: the last minute's p50, p99 and max, and the count since its start, of one snapshot. */
    public record LockWaits(String node, long count, double p50Millis, double p99Millis, double maxMillis) {
    }
}
