package dev.leasehold.samples.ticketoffice;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.leasehold.test.redis.RedisServerExtension;
import dev.leasehold.test.redis.TestRedisServer;
import dev.leasehold.test.redis.TestRedisServers;
import tools.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code ./demo.sh --quorum} shows, as a test: two instances of the sample lock on a quorum of five
 * independent Redis servers ({@code leasehold.quorum.nodes}); two of the five are killed in the middle of
 * the booking load, and nothing is oversold, no request fails, and the lock keys were never on
 * {@code spring.data.redis}.
 */
@Timeout(120)
class TicketOfficeQuorumTest {

    /** The application's own Redis (spring.data.redis): configured, but it holds no lock keys. */
    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    static final List<TestRedisServer> quorum = new ArrayList<>();

    static TicketOfficeNode nodeA;

    static TicketOfficeNode nodeB;

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < 5; i++) {
            quorum.add(TestRedisServers.startOwn(List.of(), Map.of()));
        }
        String nodes = "--leasehold.quorum.nodes=" + quorum.stream().map(TestRedisServer::url).collect(Collectors.joining(","));
        nodeA = TicketOfficeNode.start("node-a", redis.server(), "tickets-quorum", "test-q:", nodes);
        nodeB = TicketOfficeNode.start("node-b", redis.server(), "tickets-quorum", "test-q:", nodes);
    }

    @AfterAll
    static void stopNodes() {
        if (nodeB != null) {
            nodeB.close();
        }
        if (nodeA != null) {
            nodeA.close();
        }
        quorum.forEach(TestRedisServer::close);
    }

    @Test
    void twoOfFiveNodesKilledDuringTheLoadAndNothingIsOversold() throws Exception {
        int seats = 40;
        int attempts = 240;
        long showId = nodeA.createShow("Quorum", seats);
        try (BookingLoad load = BookingLoad.start(List.of(nodeA, nodeB), showId, attempts, 16, true)) {
            Await.until(Duration.ofSeconds(60), "half of the attempts were answered",
                    () -> load.booked.get() + load.soldOut.get() + load.errors.size() >= attempts / 2);
            // SIGKILL (the embedded-redis fallback stops its process as that library does)
            quorum.get(1).stop();
            quorum.get(3).stop();
            int answeredAtKill = load.booked.get() + load.soldOut.get() + load.errors.size();
            assertThat(answeredAtKill).as("the kill came in the middle of the load").isLessThan(attempts);
            load.await(60);

            assertThat(load.errors).isEmpty();
            assertThat(load.booked).hasValue(seats);
            assertThat(load.soldOut).hasValue(attempts - seats);
        }
        JsonNode show = nodeB.show(showId);
        assertThat(show.path("booked").asLong()).isEqualTo(seats);
        assertThat(show.path("oversold").asLong()).isZero();

        // the key as the three remaining nodes see it, and each node's health as both instances see it
        assertThat(nodeA.getJson("/actuator/leasehold/show:" + showId).path("held").asBoolean()).isFalse();
        String killed1 = quorum.get(1).host() + ":" + quorum.get(1).port();
        String killed3 = quorum.get(3).host() + ":" + quorum.get(3).port();
        for (TicketOfficeNode node : List.of(nodeA, nodeB)) {
            JsonNode health = node.getJson("/actuator/leasehold").path("quorum");
            assertThat(health.path("majority").asInt()).isEqualTo(3);
            assertThat(health.path("nodes")).hasSize(5);
            for (JsonNode each : health.path("nodes")) {
                boolean dead = each.path("node").asString().equals(killed1) || each.path("node").asString().equals(killed3);
                assertThat(each.path("answering").asBoolean()).as(each.toString()).isEqualTo(!dead);
                if (!dead) {
                    assertThat(each.path("granted").asLong()).as(each.toString()).isPositive();
                }
            }
        }
        assertThat(redis.server().command("KEYS", "test-q:*")).as("no lock key on spring.data.redis").isEqualTo("[]");
    }
}
