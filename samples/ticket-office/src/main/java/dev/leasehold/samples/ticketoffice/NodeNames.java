package dev.leasehold.samples.ticketoffice;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.leasehold.actuator.LeaseholdEndpoint;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * Every instance's name ({@code ticket-office.node}) by its Leasehold instance id, in the shared database: Redis
 * knows the holders and the queue of a key by instance id only, and the live page shows the names.
 */
@Component
public class NodeNames {

    private final JdbcClient jdbc;

    private final Box box;

    private final ObjectProvider<LeaseholdEndpoint> leasehold;

    public NodeNames(JdbcClient jdbc, Box box, ObjectProvider<LeaseholdEndpoint> leasehold) {
        this.jdbc = jdbc;
        this.box = box;
        this.leasehold = leasehold;
    }

    @EventListener(ApplicationReadyEvent.class)
    void register() {
        LeaseholdEndpoint endpoint = leasehold.getIfAvailable();
        if (endpoint != null) {
            // an instance id is new at every start (it ends with a random part): no row to replace
            jdbc.sql("INSERT INTO node_instance (instance_id, node) VALUES (?, ?)")
                .params(endpoint.locks().instanceId(), box.node())
                .update();
        }
    }

    public Map<String, String> byInstanceId() {
        Map<String, String> names = new LinkedHashMap<>();
        jdbc.sql("SELECT instance_id, node FROM node_instance ORDER BY registered_at")
            .query(rs -> {
                names.put(rs.getString("instance_id"), rs.getString("node"));
            });
        return names;
    }
}
