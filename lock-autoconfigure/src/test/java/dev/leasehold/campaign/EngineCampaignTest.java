package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import dev.leasehold.campaign.CampaignServers.Config;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine-level campaign: for each configuration and seed, one run of random operations and faults on
 * real Redis, checked by {@link HistoryChecker}; the report and timelines go to {@code target/campaign}.
 * The build runs it briefly with fixed seeds; {@code -Pcampaign} runs it long with fresh ones
 * (docs/failure-modes.md). A failing run prints its seed and the command that replays it.
 */
class EngineCampaignTest {

    @TestFactory
    Stream<DynamicTest> campaign() {
        List<String> every = Arrays.stream(Config.values()).map(Config::name).toList();
        CampaignSettings settings = CampaignSettings.fromSystemProperties(12, every, every, List.of(1L));
        List<DynamicTest> runs = new ArrayList<>();
        for (String config : settings.configs()) {
            for (long seed : settings.seeds()) {
                runs.add(DynamicTest.dynamicTest(config + " seed " + seed, () -> {
                    EngineCampaign.Run run = EngineCampaign.run(Config.valueOf(config), seed, settings.seconds());
                    String report = CampaignReport.add(run);
                    System.out.println(CampaignReport.header() + "\n" + report);
                    assertThat(run.findings().violations())
                        .as("violations of seed %d on %s; replay with:%n%s", seed, config, CampaignReport.replayCommand(run))
                        .isEmpty();
                    assertThat(run.history().sections()).as("critical sections run").isNotEmpty();
                }));
            }
        }
        return runs.stream();
    }
}
