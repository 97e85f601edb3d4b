package dev.leasehold.docs.snippets.view;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

@Configuration(proxyBeanMethods = false)
class LeaderElection {

    // tag::leader[]
    @Bean
    LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> registry) {
        return new LockRegistryLeaderInitiator(registry, new DefaultCandidate("node-1", "billing-leader"));
    }
    // end::leader[]
}
