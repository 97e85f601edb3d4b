package dev.leasehold.samples.ticketoffice;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.LockHandle;
import dev.leasehold.LockMode;
import dev.leasehold.LockService;
import dev.leasehold.engine.LockEngine;
import dev.leasehold.test.redis.RedisServerExtension;
import tools.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample (two Spring contexts, two Redis clients, one database) on a real Redis,
 * driven through their HTTP API as the demo drives them.
 */
@Timeout(180)
class TicketOfficeTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    static TicketOfficeNode nodeA;

    static TicketOfficeNode nodeB;

    @BeforeAll
    static void startNodes() {
        // a payment that takes a while: a wide window for two unlocked bookings to overlap
        nodeA = TicketOfficeNode.start("node-a", redis.server(), "tickets", "test:", "--ticket-office.payment-time=30ms");
        nodeB = TicketOfficeNode.start("node-b", redis.server(), "tickets", "test:", "--ticket-office.payment-time=30ms");
    }

    @AfterAll
    static void stopNodes() {
        if (nodeB != null) {
            nodeB.close();
        }
        if (nodeA != null) {
            nodeA.close();
        }
    }

    @Test
    void concurrentBookingsThroughTwoNodesNeverOversell() throws Exception {
        long showId = nodeA.createShow("Locked", 40);
        BookingLoad load = BookingLoad.start(List.of(nodeA, nodeB), showId, 160, 24, true).await(120);

        assertThat(load.errors).isEmpty();
        assertThat(load.booked).hasValue(40);
        assertThat(load.soldOut).hasValue(120);
        JsonNode show = nodeB.show(showId);
        assertThat(show.path("booked").asLong()).isEqualTo(40);
        assertThat(show.path("seatsLeft").asInt()).isZero();
        assertThat(show.path("oversold").asLong()).isZero();

        // both nodes sold, each booking under its own lock acquisition: fencing tokens all differ
        JdbcClient jdbc = nodeA.context.getBean(JdbcClient.class);
        List<String> nodes = jdbc.sql("SELECT DISTINCT node FROM booking WHERE show_id = :id").param("id", showId)
            .query(String.class).list();
        assertThat(nodes).containsExactlyInAnyOrder("node-a", "node-b");
        List<Long> fences = jdbc.sql("SELECT fence FROM booking WHERE show_id = :id").param("id", showId)
            .query(Long.class).list();
        assertThat(fences).hasSize(40).allMatch(fence -> fence > 0);
        assertThat(new HashSet<>(fences)).hasSize(40);
    }

    /** The same load without the lock oversells: the test above could fail, and the lock is what passes it. */
    @Test
    void withoutTheLockTheSameLoadOversells() throws Exception {
        long showId = nodeA.createShow("Unlocked", 5);
        BookingLoad load = BookingLoad.start(List.of(nodeA, nodeB), showId, 16, 16, false).await(120);

        assertThat(load.errors).isEmpty();
        JsonNode show = nodeA.show(showId);
        assertThat(show.path("booked").asLong()).isEqualTo(load.booked.get()).isGreaterThan(5);
        assertThat(show.path("oversold").asLong()).isEqualTo(load.booked.get() - 5L);
    }

    @Test
    void theSettlementJobWritesItsFencingTokenAndTheDatabaseRefusesAStaleOne() {
        long showId = nodeA.createShow("Settled", 10);
        assertThat(nodeA.post("/api/shows/" + showId + "/bookings", "{\"seats\":3}").statusCode()).isEqualTo(201);

        SettlementJob.Result first = nodeA.context.getBean(SettlementJob.class).settle(showId).orElseThrow();
        assertThat(first.written()).isTrue();
        assertThat(first.totals().seats()).isEqualTo(3);
        JsonNode second = nodeB.getJson("/api/shows/" + showId + "/settlement");
        assertThat(second.path("fence").asLong()).isEqualTo(first.fence());

        HttpResponse<String> settledByB = nodeB.post("/api/shows/" + showId + "/settlement", "");
        assertThat(settledByB.statusCode()).isEqualTo(200);
        long newer = TicketOfficeNode.JSON.readTree(settledByB.body()).path("fence").asLong();
        assertThat(newer).isGreaterThan(first.fence());

        // a holder that lost its lock while paused comes back with its old token: the database says no
        ShowRepository repository = nodeA.context.getBean(ShowRepository.class);
        assertThat(repository.saveSettlement(showId, new ShowRepository.Totals(999, 999), first.fence(), "paused")).isFalse();
        ShowRepository.Settlement settlement = repository.settlement(showId).orElseThrow();
        assertThat(settlement.fence()).isEqualTo(newer);
        assertThat(settlement.seatsSold()).isEqualTo(3);
        assertThat(settlement.settledBy()).isEqualTo("node-b");

        // while one node settles, another does not wait: it is told so
        try (LockHandle busy = nodeA.context.getBean(LockService.class).lock("settlement:" + showId, Duration.ZERO)) {
            assertThat(nodeB.post("/api/shows/" + showId + "/settlement", "").statusCode()).isEqualTo(409);
        }
    }

    @Test
    void aPriceChangeWaitsForTheCatalogReadersAndTheKeyShowsWhyOnTheActuator() throws Exception {
        long showId = nodeA.createShow("Catalog", 10);
        assertThat(nodeB.show(showId).path("priceCents").asInt()).isEqualTo(5000);

        // a long catalog read on node A (held here in the test, as a slow reader would)
        LockEngine engineA = nodeA.context.getBean(LockEngine.class);
        LockHandle reader = engineA.tryLock("catalog:" + showId, LockMode.READ, Duration.ZERO, null).orElseThrow();
        CompletableFuture<HttpResponse<String>> change = CompletableFuture.supplyAsync(
                () -> nodeB.put("/api/shows/" + showId + "/price", "{\"priceCents\":6500}"));
        Await.until(Duration.ofSeconds(10), "the writer is seen waiting for the reader",
                () -> nodeB.getJson("/actuator/leasehold/catalog:" + showId).path("writerWaiting").asBoolean());
        HttpResponse<String> key = nodeB.get("/actuator/leasehold/catalog:" + showId);
        JsonNode state = TicketOfficeNode.JSON.readTree(key.body());
        assertThat(state.path("held").asBoolean()).isTrue();
        assertThat(state.path("mode").asString()).isEqualTo("READ");
        assertThat(state.path("readers").asInt()).isEqualTo(1);
        assertThat(state.path("leaseLeftMillis").asLong()).isPositive();
        assertThat(state.path("fencingCounter").asLong()).isEqualTo(reader.fencingToken());
        assertThat(change).isNotDone();
        reader.close();

        assertThat(change.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(nodeA.show(showId).path("priceCents").asInt()).isEqualTo(6500);
        assertThat(nodeA.getJson("/actuator/leasehold/catalog:" + showId).path("held").asBoolean()).isFalse();
    }

    @Test
    void theOneKeyEndpointShowsWhichNodeHoldsTheKeyAndWhichAreQueuedForItButNoOwnerToken() throws Exception {
        long showId = nodeA.createShow("Queued", 10);
        String key = "show:" + showId;
        String instanceA = nodeA.getJson("/actuator/leasehold").path("instanceId").asString();
        String instanceB = nodeB.getJson("/actuator/leasehold").path("instanceId").asString();
        LockHandle held = nodeA.context.getBean(LockService.class).lock(key, Duration.ZERO);
        CompletableFuture<HttpResponse<String>> booking = CompletableFuture.supplyAsync(
                () -> nodeB.post("/api/shows/" + showId + "/bookings", "{\"seats\":1}"));
        Await.until(Duration.ofSeconds(10), "node B is seen queued for the key",
                () -> nodeA.getJson("/actuator/leasehold/" + key).path("queue").size() == 1);
        HttpResponse<String> response = nodeA.get("/actuator/leasehold/" + key);
        JsonNode state = TicketOfficeNode.JSON.readTree(response.body());
        assertThat(state.path("holders").size()).isEqualTo(1);
        assertThat(state.path("holders").get(0).asString()).isEqualTo(instanceA);
        assertThat(state.path("queue").get(0).path("instance").asString()).isEqualTo(instanceB);
        assertThat(state.path("queue").get(0).path("mode").asString()).isEqualTo("EXCLUSIVE");
        String ownerToken = nodeA.context.getBean(StringRedisTemplate.class).opsForValue().get("test:{" + key + "}");
        assertThat(ownerToken).startsWith(instanceA + ":");
        assertThat(response.body()).doesNotContain(ownerToken);

        held.close();
        assertThat(booking.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        JsonNode after = nodeB.getJson("/actuator/leasehold/" + key);
        assertThat(after.path("held").asBoolean()).isFalse();
        assertThat(after.path("holders").size()).isZero();
        assertThat(after.path("queue").size()).isZero();
    }

    @Test
    void actuatorExposesHealthMetricsAndTheLeaseholdEndpointOnly() {
        long showId = nodeA.createShow("Observed", 10);
        nodeA.post("/api/shows/" + showId + "/bookings", "{\"seats\":1}");
        assertThat(nodeA.getJson("/actuator/health").path("status").asString()).isEqualTo("UP");
        assertThat(nodeA.metric("leasehold.lock.acquire", "tag=result:acquired&tag=mode:EXCLUSIVE", "COUNT")).isPositive();
        assertThat(nodeA.metric("leasehold.lock.acquire.percentile",
                "tag=result:acquired&tag=mode:EXCLUSIVE&tag=phi:0.99", "VALUE")).isPositive();
        JsonNode locks = nodeA.getJson("/actuator/leasehold");
        assertThat(locks.path("keyPrefix").asString()).isEqualTo("test:");
        assertThat(locks.path("held").isArray()).isTrue();
        JsonNode key = nodeB.getJson("/actuator/leasehold/show:" + showId);
        assertThat(key.path("held").asBoolean()).isFalse();
        // released: the last token lives in the lock's value only while it is held, and on one server the next
        // grant's token is above the server clock anyway, so Redis keeps no counter for a key at rest (0)
        assertThat(key.has("fencingCounter")).isTrue();
        assertThat(key.path("fencingCounter").asLong()).isZero();
        assertThat(nodeA.get("/actuator/env").statusCode()).isEqualTo(404);
        assertThat(nodeA.get("/").body()).contains("live.js");
        assertThat(nodeA.post("/api/shows/424242/bookings", "{\"seats\":1}").statusCode()).isEqualTo(404);
        assertThat(nodeA.post("/api/shows/" + showId + "/bookings", "{\"seats\":11}").statusCode()).isEqualTo(400);
        assertThat(Optional.ofNullable(nodeA.getJson("/api/node").path("node").asString())).contains("node-a");
    }
}
