package dev.leasehold.campaign;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The campaign's report: a Markdown table (a row per run: seed, operations, sections, faults, overlaps and
 * losses, the longest free stretch a timed-out waiter saw, violations) with a timeline picture per run, under
 * {@code target/campaign}, and the command that replays a run's seed.
 */
public final class CampaignReport {

    static final Path DIRECTORY = Path.of("target", "campaign");

    private CampaignReport() {
    }

    public static String replayCommand(EngineCampaign.Run run) {
        String test = run.level().equals("engine") ? "EngineCampaignTest" : "ProcessCampaignTest";
        return "./mvnw -B -pl lock-autoconfigure -am verify -Dtest=" + test + " -Dsurefire.failIfNoSpecifiedTests=false"
                + " -Dleasehold.campaign.configs=" + run.config() + " -Dleasehold.campaign.seed=" + run.seed()
                + " -Dleasehold.campaign.seconds=" + run.seconds();
    }

    static String row(EngineCampaign.Run run) {
        History history = run.history();
        HistoryChecker.Findings findings = run.findings();
        return String.format(Locale.ROOT, "| %s | %s | %d | %d s | %d | %d | %d | %d | %d | %d | %.0f ms | %d |", run.level(),
                run.config(), run.seed(), run.seconds(), history.operationCount(), history.sections().size(),
                history.faults().size(), findings.overlaps(), findings.toldLost(), history.failures().size(),
                findings.maxFreeMillis(), findings.violations().size());
    }

    public static String header() {
        return "| level | configuration | seed | length | operations | sections | faults | overlaps (older told) "
                + "| sections told lost | documented failures | longest free stretch in a timed-out wait | violations |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|";
    }

    /** Writes the run's picture and appends its row (and its violations) to the report; returns the text. */
    public static synchronized String add(EngineCampaign.Run run) {
        String name = run.level() + "-" + run.config().toLowerCase(Locale.ROOT) + "-" + run.seed();
        Timeline.write(run, DIRECTORY.resolve(name + ".png"));
        StringBuilder text = new StringBuilder(row(run)).append('\n');
        List<HistoryChecker.Violation> violations = run.findings().violations();
        violations.stream().limit(20).forEach(violation -> text.append("  - ").append(violation).append('\n'));
        text.append("  operations: ").append(run.history().operations()).append('\n');
        java.util.Map<String, Long> faults = run.history().faults().stream().collect(java.util.stream.Collectors
            .groupingBy(History.Fault::kind, java.util.TreeMap::new, java.util.stream.Collectors.counting()));
        text.append("  faults: ").append(faults).append('\n');
        text.append("  fault windows: ").append(run.history().faults().stream()
            .map(fault -> fault.kind() + " " + fault.target() + " " + History.ms(fault.start()) + "+"
                    + History.ms(fault.end() - fault.start()))
            .collect(java.util.stream.Collectors.joining(", "))).append('\n');
        run.history().failures().stream()
            .collect(java.util.stream.Collectors.groupingBy(failure -> failure.instance() + " " + failure.op() + ": "
                    + failure.message().replaceAll("[0-9]+", "N").replaceAll("'[^']*'", "K"),
                    java.util.TreeMap::new, java.util.stream.Collectors.counting()))
            .forEach((what, count) -> text.append("  failures ").append(count).append("x ").append(what).append('\n'));
        if (!violations.isEmpty()) {
            text.append("  replay: ").append(replayCommand(run)).append('\n');
        }
        try {
            Files.createDirectories(DIRECTORY);
            Path report = DIRECTORY.resolve("report.md");
            if (!Files.exists(report)) {
                Files.writeString(report, header() + "\n");
            }
            Files.writeString(report, text.toString(), java.nio.file.StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return text.toString();
    }
}
