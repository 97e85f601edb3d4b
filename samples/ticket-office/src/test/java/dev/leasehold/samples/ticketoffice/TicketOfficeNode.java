package dev.leasehold.samples.ticketoffice;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.test.redis.TestRedisServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One instance of the sample on a random port, as the demo runs it: its own Spring context, its own Redis
 * client (so two nodes are two Redis clients), and a database shared with the other nodes of the test.
 */
final class TicketOfficeNode implements AutoCloseable {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final ConfigurableApplicationContext context;

    final String url;

    private TicketOfficeNode(ConfigurableApplicationContext context) {
        this.context = context;
        this.url = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
    }

    /**
     * @param database an H2 in-memory database name: nodes given the same name share it
     * @param keyPrefix the lock keys of this test, apart from others'
     */
    static TicketOfficeNode start(String name, TestRedisServer redis, String database, String keyPrefix, String... extra) {
        return start(new SpringApplicationBuilder(TicketOfficeApplication.class), name, redis, database, keyPrefix, extra);
    }

    /** @param application the application to run, e.g. with a bean of the test's registered before it starts */
    static TicketOfficeNode start(SpringApplicationBuilder application, String name, TestRedisServer redis,
            String database, String keyPrefix, String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
                "--ticket-office.node=" + name,
                "--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
                "--spring.datasource.url=jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1",
                "--leasehold.key-prefix=" + keyPrefix, "--ticket-office.settlement-interval=1h",
                "--spring.main.banner-mode=off"));
        args.addAll(List.of(extra));
        return new TicketOfficeNode(application.run(args.toArray(String[]::new)));
    }

    HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(url + path)).GET());
    }

    JsonNode getJson(String path) {
        HttpResponse<String> response = get(path);
        if (response.statusCode() != 200) {
            throw new IllegalStateException(path + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    HttpResponse<String> post(String path, String body) {
        return send(HttpRequest.newBuilder(URI.create(url + path)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    HttpResponse<String> put(String path, String body) {
        return send(HttpRequest.newBuilder(URI.create(url + path)).header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body)));
    }

    /** Creates a show and returns its id. */
    long createShow(String title, int seats) {
        HttpResponse<String> response = post("/api/shows", "{\"title\":\"" + title + "\",\"seats\":" + seats + ",\"priceCents\":5000}");
        if (response.statusCode() != 201) {
            throw new IllegalStateException("HTTP " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body()).path("id").asLong();
    }

    JsonNode show(long showId) {
        return getJson("/api/shows/" + showId);
    }

    /** A meter statistic from /actuator/metrics, 0 when the meter recorded nothing yet. */
    double metric(String name, String tags, String statistic) {
        HttpResponse<String> response = get("/actuator/metrics/" + name + (tags.isEmpty() ? "" : "?" + tags));
        if (response.statusCode() == 404) {
            return 0;
        }
        for (JsonNode measurement : JSON.readTree(response.body()).path("measurements")) {
            if (statistic.equals(measurement.path("statistic").asString())) {
                return measurement.path("value").asDouble();
            }
        }
        return 0;
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return HTTP.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        context.close();
    }
}
