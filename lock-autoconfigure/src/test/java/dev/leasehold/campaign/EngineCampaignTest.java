package dev.leasehold.campaign;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import dev.leasehold.campaign.CampaignServers.Config;

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
        return settings.tests((config, seed) -> EngineCampaign.run(Config.valueOf(config), seed, settings.seconds()), 1);
    }
}
