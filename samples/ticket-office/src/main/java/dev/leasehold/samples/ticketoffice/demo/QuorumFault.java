package dev.leasehold.samples.ticketoffice.demo;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The fault of {@code ./demo.sh --quorum}: kills (SIGKILL) some of the quorum's Redis nodes once half of
 * the booking attempts got their answer, and afterwards reports which nodes died when, and each node's
 * health as the sample's instances see it ({@code /actuator/leasehold}, its {@code quorum} part).
 * <p>
 * Targets are given as {@code pid@host:port}: the demo script started those {@code redis-server}
 * processes and passes their process ids.
 */
final class QuorumFault {

    /** One node to kill. */
    record Target(long pid, String node) {

        static Target parse(String text) {
            int at = text.indexOf('@');
            if (at <= 0) {
                throw new IllegalArgumentException("expected pid@host:port, got " + text);
            }
            return new Target(Long.parseLong(text.substring(0, at)), text.substring(at + 1));
        }
    }

    private final List<Target> targets;

    private final AtomicBoolean fired = new AtomicBoolean();

    private volatile long killedAtNanos;

    private volatile LocalTime killedAtClock;

    private volatile int answeredBeforeKill;

    private final List<String> outcomes = new ArrayList<>();

    QuorumFault(List<Target> targets) {
        this.targets = List.copyOf(targets);
    }

    static QuorumFault parse(String commaSeparated) {
        List<Target> targets = new ArrayList<>();
        for (String part : commaSeparated.split(",")) {
            if (!part.isBlank()) {
                targets.add(Target.parse(part.trim()));
            }
        }
        return new QuorumFault(targets);
    }

    /**
     * Called after every answered attempt: the first call at or past half the attempts kills the targets
     * (in that calling client thread, so the load goes on around it).
     * @return a line to show in the progress, once, when the kill happened
     */
    Optional<String> afterAnswer(int answered, int attempts, long loadStartedNanos) {
        if (targets.isEmpty() || answered < attempts / 2 || !fired.compareAndSet(false, true)) {
            return Optional.empty();
        }
        killedAtNanos = System.nanoTime() - loadStartedNanos;
        killedAtClock = LocalTime.now().truncatedTo(ChronoUnit.MILLIS);
        answeredBeforeKill = answered;
        for (Target target : targets) {
            Optional<ProcessHandle> process = ProcessHandle.of(target.pid());
            if (process.isEmpty()) {
                outcomes.add(target.node() + ": pid " + target.pid() + " was already gone");
                continue;
            }
            boolean sent = process.get().destroyForcibly(); // SIGKILL on Linux and macOS: no shutdown, no save
            boolean gone = false;
            try {
                process.get().onExit().get(5, TimeUnit.SECONDS);
                gone = true;
            }
            catch (Exception ex) {
                // reported below
            }
            outcomes.add(target.node() + " (pid " + target.pid() + ")" + (sent && gone ? "" : ": NOT confirmed dead"));
        }
        return Optional.of(String.format(Locale.ROOT, "KILLED (SIGKILL) %d quorum nodes at %.1f s: %s",
                targets.size(), killedAtNanos / 1e9, String.join(", ", outcomes)));
    }

    boolean fired() {
        return fired.get();
    }

    /** The report's quorum lines. */
    List<String> reportLines(List<String> instances, int attempts, HttpClient http, JsonMapper json) {
        List<String> lines = new ArrayList<>();
        if (!targets.isEmpty()) {
            lines.add(fired.get()
                    ? String.format(Locale.ROOT, "killed (SIGKILL)  %s at %.1f s into the load (%s), after %d of %d attempts",
                            String.join(", ", outcomes), killedAtNanos / 1e9, killedAtClock, answeredBeforeKill, attempts)
                    : "killed (SIGKILL)  nothing: the load ended before half of it was answered");
        }
        Map<String, List<JsonNode>> byNode = new LinkedHashMap<>();
        int majority = 0;
        for (String instance : instances) {
            JsonNode quorum = quorumPart(instance, http, json);
            if (quorum == null) {
                lines.add("quorum health     " + instance + "/actuator/leasehold has no quorum part");
                continue;
            }
            majority = quorum.path("majority").asInt();
            for (JsonNode node : quorum.path("nodes")) {
                byNode.computeIfAbsent(node.path("node").asString(), name -> new ArrayList<>()).add(node);
            }
        }
        if (byNode.isEmpty()) {
            return lines;
        }
        lines.add(String.format(Locale.ROOT, "quorum            %d nodes, a lock needs %d; per node, summed over the %d instances"
                + " (answering: as each instance sees it now):", byNode.size(), majority, instances.size()));
        for (Map.Entry<String, List<JsonNode>> entry : byNode.entrySet()) {
            long granted = 0;
            long refused = 0;
            long errors = 0;
            List<String> answering = new ArrayList<>();
            for (JsonNode node : entry.getValue()) {
                granted += node.path("granted").asLong();
                refused += node.path("refused").asLong();
                errors += node.path("errors").asLong();
                answering.add(node.path("answering").asBoolean() ? "yes" : "no");
            }
            boolean killed = outcomes.stream().anyMatch(outcome -> outcome.startsWith(entry.getKey() + " "));
            lines.add(String.format(Locale.ROOT, "  %-21s %-7s answering %-7s granted %6d  refused %5d  errors %5d",
                    entry.getKey(), killed ? "KILLED" : "up", String.join("/", answering), granted, refused, errors));
        }
        return lines;
    }

    private static JsonNode quorumPart(String instance, HttpClient http, JsonMapper json) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(instance + "/actuator/leasehold"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode quorum = json.readTree(response.body()).path("quorum");
            return response.statusCode() == 200 && quorum.isObject() ? quorum : null;
        }
        catch (Exception ex) {
            return null;
        }
    }
}
