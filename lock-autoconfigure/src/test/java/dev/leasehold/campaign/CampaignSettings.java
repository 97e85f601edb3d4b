package dev.leasehold.campaign;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

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
}
