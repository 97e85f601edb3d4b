package dev.leasehold.samples.ticketoffice;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.leasehold.samples.ticketoffice.demo.LoadDriver;
import dev.leasehold.test.redis.RedisServerExtension;
import tools.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's report, after a load through two nodes: its figures agree with each other (a report once gave a
 * node "p50 218 ms, p99 168 ms", each figure a separate query over a sliding window) and with the live page's
 * names of the nodes.
 */
@Timeout(180)
class LoadReportTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void everyFigureOfAReportAgreesWithTheOthers() throws Exception {
        try (TicketOfficeNode nodeA = TicketOfficeNode.start("node-a", redis.server(), "load-report", "report:");
                TicketOfficeNode nodeB = TicketOfficeNode.start("node-b", redis.server(), "load-report", "report:")) {
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            int attempts = 300;
            LoadDriver.Report report = new LoadDriver(List.of(nodeA.url, nodeB.url), attempts, 100, 16, true,
                    new PrintStream(printed, true, StandardCharsets.UTF_8)).warmUp(0).run();

            assertThat(report.oversold()).isZero();
            assertThat(report.booked() + report.soldOut() + report.busy() + report.errors()).isEqualTo(attempts);
            assertThat(report.sold()).isEqualTo(report.booked()).isEqualTo(100);
            assertThat(report.lockWaits()).hasSize(2);
            // each booking attempt that reached its method took the show's lock once
            assertThat(report.acquisitions()).isEqualTo(attempts - report.busy() - report.errors());
            for (LoadDriver.LockWaits waits : report.lockWaits()) {
                TicketOfficeNode node = waits.node().equals(nodeA.url) ? nodeA : nodeB;
                assertThat(waits.p50Millis()).as(waits.node()).isPositive().isLessThanOrEqualTo(waits.p99Millis());
                assertThat(waits.p99Millis()).as(waits.node()).isLessThanOrEqualTo(waits.maxMillis());
                // the count is the timer's (the load is over: nothing records meanwhile)
                assertThat(waits.count()).as(waits.node()).isEqualTo(Math.round(node.metric("leasehold.lock.acquire",
                        "tag=result:acquired&tag=mode:EXCLUSIVE", "COUNT")));
            }
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("lock wait         " + nodeA.url + " p50 ");

            // the live page names the key's holders by node, whichever node serves the page
            JsonNode names = nodeB.getJson("/api/nodes");
            String instanceA = nodeA.getJson("/actuator/leasehold").path("instanceId").asString();
            String instanceB = nodeB.getJson("/actuator/leasehold").path("instanceId").asString();
            assertThat(names.path(instanceA).asString()).isEqualTo("node-a");
            assertThat(names.path(instanceB).asString()).isEqualTo("node-b");
        }
    }
}
