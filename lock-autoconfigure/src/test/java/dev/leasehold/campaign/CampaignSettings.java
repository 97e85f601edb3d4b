package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a campaign runs, from system properties: {@code leasehold.campaign.seconds} per run,
 * {@code leasehold.campaign.configs} (comma-separated), {@code leasehold.campaign.seed} (one seed to replay)
 * or {@code leasehold.campaign.runs} fresh seeds per configuration. Without a seed or a run count, the
 * build's short campaign runs fixed seeds, so that a red build is a finding that replays, not bad luck.
 */
public record CampaignSettings(long seconds, List<String> configs, List<Long> seeds) {

    /**
     * @param buildConfigs the configurations the build runs ({@code ALL} in {@code leasehold.campaign.configs} asks
     * for every one of {@code allConfigs})
     */
    public static CampaignSettings fromSystemProperties(long defaultSeconds, List<String> allConfigs,
            List<String> buildConfigs, List<Long> buildSeeds) {
        long seconds = Long.getLong("leasehold.campaign.seconds", defaultSeconds);
        String configs = System.getProperty("leasehold.campaign.configs", "");
        List<String> chosen = configs.isBlank() ? buildConfigs : configs.equalsIgnoreCase("ALL") ? allConfigs
                : Arrays.stream(configs.split(",")).map(String::trim).map(String::toUpperCase).toList();
        List<Long> seeds = new ArrayList<>();
        String seed = System.getProperty("leasehold.campaign.seed", "");
        Integer runs = Integer.getInteger("leasehold.campaign.runs");
        if (!seed.isBlank()) {
            seeds.add(Long.parseLong(seed.trim()));
        }
        else if (runs != null) {
            Random fresh = new Random();
            for (int i = 0; i < runs; i++) {
                seeds.add((long) fresh.nextInt(1_000_000));
            }
        }
        else {
            seeds.addAll(buildSeeds);
        }
        return new CampaignSettings(seconds, chosen, seeds);
    }

    /**
     * A test per configuration and seed: the run, its row in the report, and no violation (else its seed and
     * the command that replays it); at least {@code minSections} critical sections, so a run that did nothing fails.
     */
    public Stream<DynamicTest> tests(BiFunction<String, Long, EngineCampaign.Run> runner, int minSections) {
        return configs.stream().flatMap(config -> seeds.stream().map(seed -> DynamicTest.dynamicTest(
                config + " seed " + seed, () -> {
                    EngineCampaign.Run run = runner.apply(config, seed);
                    System.out.println(CampaignReport.header() + "\n" + CampaignReport.add(run));
                    assertThat(run.findings().violations())
                        .as("violations of seed %d on %s; replay with:%n%s", seed, config, CampaignReport.replayCommand(run))
                        .isEmpty();
                    assertThat(run.history().sections()).as("critical sections run").hasSizeGreaterThanOrEqualTo(minSections);
                })));
    }
}
