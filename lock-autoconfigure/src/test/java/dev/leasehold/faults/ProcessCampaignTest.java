package dev.leasehold.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import dev.leasehold.campaign.CampaignReport;
import dev.leasehold.campaign.CampaignSettings;
import dev.leasehold.campaign.EngineCampaign;
import dev.leasehold.faults.ProcessCampaign.Config;

import static org.assertj.core.api.Assertions.assertThat;

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
                java.util.Arrays.stream(Config.values()).map(Config::name).toList(), List.of("SINGLE", "QUORUM"), List.of(1L));
        List<DynamicTest> runs = new ArrayList<>();
        for (String config : settings.configs()) {
            for (long seed : settings.seeds()) {
                runs.add(DynamicTest.dynamicTest(config + " seed " + seed, () -> {
                    EngineCampaign.Run run = ProcessCampaign.run(Config.valueOf(config), seed, settings.seconds());
                    String report = CampaignReport.add(run);
                    System.out.println(CampaignReport.header() + "\n" + report);
                    assertThat(run.findings().violations())
                        .as("violations of seed %d on %s; replay with:%n%s", seed, config, CampaignReport.replayCommand(run))
                        .isEmpty();
                    assertThat(run.history().sections()).as("critical sections run").hasSizeGreaterThan(10);
                }));
            }
        }
        return runs.stream();
    }
}
