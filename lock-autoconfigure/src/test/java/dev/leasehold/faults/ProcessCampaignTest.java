package dev.leasehold.faults;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import dev.leasehold.campaign.CampaignSettings;
import dev.leasehold.faults.ProcessCampaign.Config;

/**
 * The process-level campaign: worker JVMs under a seeded nemesis, checked like the engine level. The build
 * runs one short run on one Redis and one on a quorum with fixed seeds; {@code -Pcampaign} runs every
 * configuration long with fresh seeds (docs/failure-modes.md). A Sentinel failover without replica
 * acknowledgement may grant twice (documented): the checker then requires the older holder to have been
 * refused by fencing and told, and the report counts those overlaps.
 */
class ProcessCampaignTest {

    @TestFactory
    Stream<DynamicTest> campaign() {
        CampaignSettings settings = CampaignSettings.fromSystemProperties(20,
                Arrays.stream(Config.values()).map(Config::name).toList(), List.of("SINGLE", "QUORUM"), List.of(1L));
        return settings.tests((config, seed) -> ProcessCampaign.run(Config.valueOf(config), seed, settings.seconds()), 10);
    }
}
